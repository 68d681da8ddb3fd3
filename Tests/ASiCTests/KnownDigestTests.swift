@testable import ASiC
import TestTools
import XCTest

/// The SHA-256 a save records for the data files it writes: right (checked against
/// `sha256sum` of the source), carried through renames and signature saves, and never
/// trusted for a file some other program put at the path.
final class KnownDigestTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = try TestSupport.temporaryFolder(self)
    }

    private func sha256sum(_ path: String) throws -> String {
        let result = try Shell.run("sha256sum", [path])
        XCTAssertEqual(result.status, 0)
        return String(result.stdout.prefix(64))
    }

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// Log-like text (deflated) and random bytes (stored), both past the size where the
    /// hashing moves to a helper thread, plus a small in-memory file.
    private func sources() throws -> (text: String, random: String) {
        var text: [UInt8] = []
        var line = 0
        while text.count < 9 << 20 {
            text += Array("line \(line) of a log that compresses well, signature container\n".utf8)
            line += 1
        }
        let textPath = try TestSupport.write(text, to: folder + "/log.txt")
        let randomPath = folder + "/random.bin"
        XCTAssertEqual(try Shell.run("sh", ["-c", "head -c \(6 << 20 | 12345) /dev/urandom > '\(randomPath)'"]).status, 0)
        return (textPath, randomPath)
    }

    /// A digest handed in with a source (what a mount computed while the file was written).
    private final class GivenDigest: ContentDigestSource, @unchecked Sendable {
        let given: ContentDigest
        init(_ given: ContentDigest) { self.given = given }
        func digest(ofSize size: Int64) -> ContentDigest? { given }
    }

    private func digestOf(_ path: String) throws -> ContentDigest {
        let running = RunningContentDigest()
        try Data(contentsOf: URL(fileURLWithPath: path)).withUnsafeBytes { running.update($0) }
        return running.finish()
    }

    func testADigestKnownBeforeTheSaveIsTakenWhenItsCRCMatchesAndRecomputedWhenNot() throws {
        let (text, random) = try sources()
        let right = try digestOf(text)
        XCTAssertEqual(hex(right.sha256), try sha256sum(text))
        // Known and right: the save records it (and its CRC agrees with the bytes written).
        var known = NewDataFile(sourcePath: text)
        known.digest = GivenDigest(right)
        // Stale (another file's CRC and SHA-256, as after a change the tracking missed): the
        // save must not take it, and computes the SHA-256 from the bytes after all.
        var stale = NewDataFile(sourcePath: random)
        stale.digest = GivenDigest(right)
        let created = try Container.create(at: folder + "/given.asice", files: [known, stale])
        XCTAssertTrue(created.knowsSHA256(of: "log.txt"))
        XCTAssertEqual(hex(try created.sha256(of: "log.txt")), try sha256sum(text))
        XCTAssertEqual(created.dataFile(named: "log.txt")?.entry.crc32, right.crc32)
        XCTAssertTrue(created.knowsSHA256(of: "random.bin"))
        XCTAssertEqual(hex(try created.sha256(of: "random.bin")), try sha256sum(random))
        // The container itself is intact: every file reads back CRC-checked.
        let reopened = try Container.open(folder + "/given.asice")
        XCTAssertEqual(hex(try reopened.sha256(of: "random.bin")), try sha256sum(random))
        XCTAssertEqual(hex(try reopened.sha256(of: "log.txt")), try sha256sum(text))
    }

    func testSavedDataFilesAreKnownWithTheRightDigest() throws {
        let (text, random) = try sources()
        let path = folder + "/doc.asice"
        let created = try Container.create(at: path, files: [
            NewDataFile(sourcePath: text), NewDataFile(sourcePath: random),
            NewDataFile(bytes: Array("small".utf8), name: "small.txt"),
        ])
        XCTAssertTrue(created.dataFile(named: "log.txt")!.isCompressed)
        XCTAssertFalse(created.dataFile(named: "random.bin")!.isCompressed)
        for name in ["log.txt", "random.bin", "small.txt"] {
            XCTAssertTrue(created.knowsSHA256(of: name), name)
        }
        XCTAssertEqual(hex(try created.sha256(of: "log.txt")), try sha256sum(text))
        XCTAssertEqual(hex(try created.sha256(of: "random.bin")), try sha256sum(random))
        XCTAssertEqual(hex(try created.sha256(of: "small.txt")), try sha256sum(TestSupport.write(Array("small".utf8), to: folder + "/s")))

        // A new snapshot of the same file knows nothing until it has read a file once.
        let reopened = try Container.open(path)
        XCTAssertFalse(reopened.knowsSHA256(of: "log.txt"))
        XCTAssertEqual(hex(try reopened.sha256(of: "log.txt")), try sha256sum(text))
        XCTAssertTrue(reopened.knowsSHA256(of: "log.txt"))
    }

    func testDigestsFollowRenamesAppendsAndSignatureSaves() throws {
        let (text, random) = try sources()
        let path = folder + "/doc.asice"
        let created = try Container.create(at: path, files: [NewDataFile(sourcePath: text)])

        var edit = created.edit()
        try edit.add(NewDataFile(sourcePath: random))  // append-only save
        let appended = try edit.save()
        XCTAssertTrue(appended.knowsSHA256(of: "log.txt"))
        XCTAssertTrue(appended.knowsSHA256(of: "random.bin"))

        edit = appended.edit()
        try edit.rename("log.txt", to: "renamed.txt")  // rewrite, copying the compressed bytes
        let renamed = try edit.save()
        XCTAssertTrue(renamed.knowsSHA256(of: "renamed.txt"))
        XCTAssertEqual(hex(try renamed.sha256(of: "renamed.txt")), try sha256sum(text))

        let signed = try renamed.savingSignatures(adding: [("META-INF/signatures0.xml", Array("<x/>".utf8))])
        XCTAssertTrue(signed.knowsSHA256(of: "renamed.txt"))
        XCTAssertTrue(signed.knowsSHA256(of: "random.bin"))
        XCTAssertEqual(hex(try signed.sha256(of: "random.bin")), try sha256sum(random))
    }

    func testNothingCarriesToAFileAnotherProgramPutThere() throws {
        let path = folder + "/doc.asice"
        let first = try Container.create(at: path, files: [NewDataFile(bytes: Array("first".utf8), name: "a.txt")])
        XCTAssertTrue(first.knowsSHA256(of: "a.txt"))
        // Another program replaces the container with one whose a.txt has other bytes of the
        // same length; a snapshot of that file must not take the old digest.
        let other = folder + "/other.asice"
        try Container.create(at: other, files: [NewDataFile(bytes: Array("other".utf8), name: "a.txt")])
        XCTAssertEqual(rename(other, path), 0)
        let replaced = try Container.open(path)
        replaced.takeDigests(savedAs: first.identity, written: [:], carriedFrom: first, names: ["a.txt": "a.txt"])
        XCTAssertFalse(replaced.knowsSHA256(of: "a.txt"))
        XCTAssertEqual(hex(try replaced.sha256(of: "a.txt")),
                       try sha256sum(TestSupport.write(Array("other".utf8), to: folder + "/o")))
    }

    func testARecordedDigestIsIgnoredForADifferentEntry() throws {
        let path = folder + "/doc.asice"
        let container = try Container.create(at: path, files: [NewDataFile(bytes: Array("one".utf8), name: "a.txt")])
        var entry = container.dataFile(named: "a.txt")!.entry
        entry.crc32 ^= 1
        let reopened = try Container.open(path)
        reopened.remember(sha256: [UInt8](repeating: 0, count: 32), of: entry, as: "a.txt")
        XCTAssertFalse(reopened.knowsSHA256(of: "a.txt"))
    }
}

/// Large files are sampled before a full deflate: incompressible ones are stored at once.
final class CompressibilitySamplingTests: XCTestCase {
    func testIncompressibleLargeFileIsStoredAndTextIsDeflated() throws {
        let folder = try TestSupport.temporaryFolder(self)
        let random = folder + "/video.data"
        XCTAssertEqual(try Shell.run("sh", ["-c", "head -c \(ZipWriter.sampledSize + 5000) /dev/urandom > '\(random)'"]).status, 0)
        // Random bytes with text after the first third: two samples of three compress well.
        let mixed = folder + "/mixed.data"
        XCTAssertEqual(try Shell.run("sh", ["-c", "head -c 6000000 /dev/urandom > '\(mixed)'; yes 'a line of text' | head -c 12000000 >> '\(mixed)'"]).status, 0)

        XCTAssertFalse(try ZipWriter.looksCompressible(PosixFile.openForReading(random), size: ZipWriter.sampledSize + 5000))
        XCTAssertTrue(try ZipWriter.looksCompressible(PosixFile.openForReading(mixed), size: 18_000_000))

        let container = try Container.create(at: folder + "/doc.asice",
                                             files: [NewDataFile(sourcePath: random), NewDataFile(sourcePath: mixed)])
        XCTAssertFalse(container.dataFile(named: "video.data")!.isCompressed)
        XCTAssertTrue(container.dataFile(named: "mixed.data")!.isCompressed)
        XCTAssertEqual(try Shell.run("unzip", ["-tq", folder + "/doc.asice"]).status, 0)
    }
}

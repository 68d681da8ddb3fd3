import TestTools
import XCTest

/// Reading a container through a real mount with shell tools and Foundation.
final class MountReadTests: XCTestCase {
    private func makeContainer(_ fixture: MountFixture, files: [(String, [UInt8])]) throws {
        var arguments = ["create", fixture.container]
        let sources = fixture.folder + "/src"
        for (name, bytes) in files {
            let path = sources + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try writeFile(bytes, path)
            arguments.append(path)
        }
        let result = try Shell.run(MountFixture.binary, arguments)
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    func testDataFilesAppearWithRealSizesTimesAndExactBytes() throws {
        let fixture = try MountFixture(self)
        let text = textLikeBytes(count: 3 << 20)
        let binary = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 11) }
        try makeContainer(fixture, files: [("report.txt", text), ("photo.jpg", binary), ("empty.txt", [])])
        try fixture.mount()

        let listing = try FileManager.default.contentsOfDirectory(atPath: fixture.mountpoint).sorted()
        XCTAssertEqual(listing, [".asicfs", "empty.txt", "photo.jpg", "report.txt"])
        let attributes = try FileManager.default.attributesOfItem(atPath: fixture.path("report.txt"))
        XCTAssertEqual(attributes[.size] as? Int, text.count)
        let sourceTime = try FileManager.default.attributesOfItem(atPath: fixture.folder + "/src/report.txt")[.modificationDate] as! Date
        let shownTime = attributes[.modificationDate] as! Date
        XCTAssertEqual(shownTime.timeIntervalSince1970, sourceTime.timeIntervalSince1970.rounded(.down), accuracy: 1)

        XCTAssertEqual(try readFile(fixture.path("report.txt")), text)
        XCTAssertEqual(try readFile(fixture.path("photo.jpg")), binary)
        XCTAssertEqual(try readFile(fixture.path("empty.txt")), [])
        // Shell tools: cmp, cat | sha256sum, cp, tar, rsync.
        XCTAssertEqual(try Shell.sh("cmp '\(fixture.path("report.txt"))' '\(fixture.folder)/src/report.txt'").status, 0)
        let copy = fixture.folder + "/copy"
        XCTAssertEqual(try Shell.sh("cp -a '\(fixture.mountpoint)/.' '\(copy)' && cmp '\(copy)/photo.jpg' '\(fixture.folder)/src/photo.jpg'").status, 0)
        let tar = try Shell.sh("tar -C '\(fixture.mountpoint)' -cf - report.txt photo.jpg | tar -tvf -")
        XCTAssertEqual(tar.status, 0, tar.stderr)
        XCTAssertTrue(tar.stdout.contains("report.txt") && tar.stdout.contains("\(text.count)"), tar.stdout)
        let rsync = try Shell.sh("rsync -a --exclude=.asicfs '\(fixture.mountpoint)/' '\(fixture.folder)/rsynced/' && cmp '\(fixture.folder)/rsynced/report.txt' '\(fixture.folder)/src/report.txt'")
        XCTAssertEqual(rsync.status, 0, rsync.stderr)
        // mmap, through Python.
        let mmap = try Shell.python("""
            import mmap, sys
            with open(sys.argv[1], 'rb') as f:
                m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
                assert m[1000:2000] == open(sys.argv[2], 'rb').read()[1000:2000]
                print(len(m))
            """, [fixture.path("report.txt"), fixture.folder + "/src/report.txt"])
        XCTAssertEqual(mmap.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "\(text.count)", mmap.stderr)
        try fixture.unmount()
    }

    func testNamesWithSlashesAppearAsSubfolders() throws {
        let fixture = try MountFixture(self)
        try TestContainers.withSubfolderEntry(fixture.container)
        try fixture.mount()
        var isFolder: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: fixture.path("folder"), isDirectory: &isFolder))
        XCTAssertTrue(isFolder.boolValue)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.path("folder")), ["test1.txt"])
        let unzip = try Shell.run("unzip", ["-p", fixture.container, "folder/test1.txt"])
        XCTAssertEqual(try readFile(fixture.path("folder/test1.txt")), Array(unzip.stdout.utf8))
        XCTAssertThrowsError(try FileManager.default.contentsOfDirectory(atPath: fixture.path("missing")))
        try fixture.unmount()
    }

    func testRandomReadsInALargeDeflatedFile() throws {
        let fixture = try MountFixture(self)
        let text = textLikeBytes(count: 48 << 20)
        try makeContainer(fixture, files: [("big.txt", text)])
        try fixture.mount()
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: fixture.path("big.txt")))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let offset = Int.random(in: 0..<text.count - 4096, using: &generator)
            try handle.seek(toOffset: UInt64(offset))
            let bytes = [UInt8](try handle.read(upToCount: 4096) ?? Data())
            XCTAssertEqual(bytes, Array(text[offset..<offset + 4096]), "at \(offset)")
        }
        try handle.close()
        try fixture.unmount()
    }

    /// 1 GiB stored file: sequential read checked by hash, then random reads.
    func testAOneGibibyteFileReadsSequentiallyAndRandomly() throws {
        let fixture = try MountFixture(self)
        let big = fixture.folder + "/big.bin"
        // A repeating but non-trivial pattern, generated quickly; stored because of its name.
        let block = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 2654435761) >> 13) }
        XCTAssertTrue(FileManager.default.createFile(atPath: big, contents: nil))
        let writer = try FileHandle(forWritingTo: URL(fileURLWithPath: big))
        for i in 0..<1024 { var b = block; b[0] = UInt8(i & 0xff); b[1] = UInt8(i >> 8); try writer.write(contentsOf: b) }
        try writer.close()
        let create = try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, big])
        XCTAssertEqual(create.status, 0, create.stderr)
        try fixture.mount()
        let sums = try Shell.sh("sha256sum '\(big)' '\(fixture.path("big.bin"))' | cut -d' ' -f1 | uniq | wc -l")
        XCTAssertEqual(sums.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "1", "identical content")
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: fixture.path("big.bin")))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let offset = Int.random(in: 0..<(1 << 30) - 4096, using: &generator)
            try handle.seek(toOffset: UInt64(offset))
            let bytes = [UInt8](try handle.read(upToCount: 4096) ?? Data())
            // Byte p is block[p % 1 MiB], except the first two bytes of each block hold its index.
            let expected = (offset..<offset + 4096).map { p -> UInt8 in
                switch p & 0xFFFFF {
                case 0: return UInt8((p >> 20) & 0xff)
                case 1: return UInt8((p >> 20) >> 8)
                default: return block[p & 0xFFFFF]
                }
            }
            XCTAssertEqual(bytes, expected, "at \(offset)")
        }
        try handle.close()
        try fixture.unmount()
    }

    /// A file read sequentially through the mount is cached once, as the mounted file's pages:
    /// the container's bytes come with O_DIRECT (`StoredEntryReader`, and `InflatePipeline` for
    /// a deflated file's compressed bytes), so the page cache does not hold them a second time
    /// as the container file's. `fincore` counts the container's cached pages; before, a read
    /// cached all of them.
    func testASequentialReadDoesNotCacheTheContainerASecondTime() throws {
        let fixture = try MountFixture(self)
        let film = (0..<(48 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 2654435761) >> 13) }
        let report = textLikeBytes(count: 24 << 20)
        try makeContainer(fixture, files: [("film.mp4", film), ("report.txt", report)])
        // The container's pages, cached while it was written, leave the cache first.
        let evict = try Shell.python("""
            import os, sys
            fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)
            """, [fixture.container])
        XCTAssertEqual(evict.status, 0, evict.stderr)
        XCTAssertLessThan(try cachedBytes(fixture.container), 4 << 20)
        try fixture.mount()

        let afterFilm = try cmp("film.mp4", fixture)
        // The first reads (before the read-ahead starts) and the kernel's readahead around them
        // are cached; the other 40-odd MiB are not.
        XCTAssertLessThan(afterFilm, 8 << 20)
        let compressed = try Shell.python(
            "import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).getinfo('report.txt').compress_size)", [fixture.container])
        let compressedSize = try XCTUnwrap(Int(compressed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), compressed.stderr)
        XCTAssertGreaterThan(compressedSize, 4 << 20)
        // The decoder's input came with O_DIRECT from the start.
        XCTAssertLessThan(try cmp("report.txt", fixture) - afterFilm, compressedSize / 4)
        try fixture.unmount()
    }

    /// Compares a file of the mount with its source; the container's cached bytes afterwards.
    private func cmp(_ name: String, _ fixture: MountFixture) throws -> Int {
        let compare = try Shell.sh("cmp '\(fixture.path(name))' '\(fixture.folder)/src/\(name)'")
        XCTAssertEqual(compare.status, 0, compare.stdout + compare.stderr)
        return try cachedBytes(fixture.container)
    }

    private func cachedBytes(_ path: String) throws -> Int {
        let result = try Shell.run("/usr/bin/fincore", ["--bytes", "--noheadings", "--output", "RES", path])
        XCTAssertEqual(result.status, 0, result.stderr)
        return try XCTUnwrap(Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), result.stdout)
    }

    func testEightParallelReadersWhileAWriterAddsFiles() throws {
        let fixture = try MountFixture(self)
        let text = textLikeBytes(count: 8 << 20)
        try makeContainer(fixture, files: [("shared.txt", text)])
        try fixture.mount()
        let failures = FailureLog()
        let mountpoint = fixture.mountpoint
        let group = DispatchGroup()
        for reader in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for round in 0..<6 {
                    guard let data = FileManager.default.contents(atPath: mountpoint + "/shared.txt"),
                          [UInt8](data) == text else { failures.add("reader \(reader) round \(round)"); return }
                }
            }
        }
        for i in 0..<20 {
            let bytes = textLikeBytes(count: 100_000 + i, seed: UInt64(i))
            try writeFile(bytes, fixture.path("added-\(i).txt"))
        }
        group.wait()
        XCTAssertEqual(failures.all, [])
        for i in 0..<20 {
            XCTAssertEqual(try readFile(fixture.path("added-\(i).txt")), textLikeBytes(count: 100_000 + i, seed: UInt64(i)))
        }
        try fixture.unmount()
        let saved = try containerContents(fixture.container)
        XCTAssertEqual(saved.count, 21)
        XCTAssertEqual(saved["added-7.txt"], textLikeBytes(count: 100_007, seed: 7))
        XCTAssertEqual(saved["shared.txt"], text)
    }
}

final class FailureLog: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func add(_ message: String) { lock.lock(); messages.append(message); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return messages }
}

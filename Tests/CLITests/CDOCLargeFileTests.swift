import Crypto
import Foundation
import TestTools
import XCTest
@testable import CDOC

/// Large encrypted containers decrypt in bounded memory through every path: `--stdout` (the file
/// waits in an encrypted spool, not in memory), `-d DIR` and `ls`, for CDOC 1.1 and CDOC2, a
/// CDOC 1.0 DDOC of several files and libdigidoc's zlib layer. Peak RSS is GNU time's `%M`.
final class CDOCLargeFileTests: CLITestCase {
    /// Far below any of the files here (160 MB and more), well above what asicfs itself needs.
    private let bound = 64 << 20

    /// Runs asicfs with `arguments` under GNU time, standard output into `output`; its peak RSS in bytes.
    private func peak(_ arguments: [String], output: String = "/dev/null", file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let peak = path("peak-\(UUID().uuidString)")
        let command = (["/usr/bin/time", "-f", "%M", "-o", peak, Self.binary] + arguments + [">", output])
            .map { $0 == ">" ? $0 : "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let result = try runTool("/bin/sh", ["-c", command], timeout: 900)
        assertSuccess(result, file: file, line: line)
        XCTAssertEqual(result.stderr, "", "nothing on standard error", file: file, line: line)
        let kib = try XCTUnwrap(Int(String(decoding: try read(peak), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        print("CDOCLargeFileTests: peak RSS \(kib) KiB for asicfs \(arguments[0])\(arguments.contains("--stdout") ? " --stdout" : arguments.contains("-d") ? " -d" : "")")
        return kib * 1024
    }

    private func assertSame(_ one: String, _ other: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try runTool("/usr/bin/cmp", [one, other]).status, 0, "\(other) is byte exact", file: file, line: line)
    }

    private func size(_ path: String) throws -> Int { try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) }

    /// `--stdout`, `-d` and `ls` of a 200 MB file in `format`, each far below the file's size.
    private func checkLargeFile(format: String, key: CDOCTestKey) throws {
        let plain = path("big.bin")
        try writeRandomFile(plain, size: 200 << 20)
        let container = path("big.\(format)")
        assertSuccess(try asicfs(["encrypt", container, plain, "--recipient", key.certificatePath, "--format", format], timeout: 600))
        let containerSize = try size(container)
        let method = ["--method", "key", "key-file=\(key.keyPath)"]

        let printed = path("printed.bin")
        let stdoutPeak = try peak(["decrypt", container, "--stdout", "big.bin"] + method, output: printed)
        try assertSame(plain, printed)
        XCTAssertLessThan(stdoutPeak, bound, "--stdout of \(containerSize) bytes of \(format)")

        let folderPeak = try peak(["decrypt", container, "-d", path("out")] + method)
        try assertSame(plain, path("out/big.bin"))
        XCTAssertLessThan(folderPeak, bound, "-d of \(containerSize) bytes of \(format)")

        let listingPeak = try peak(["ls", container])
        XCTAssertLessThan(listingPeak, bound, "ls of \(containerSize) bytes of \(format)")
    }

    func testA200MegabyteCDOC11DecryptsToStandardOutputAFolderAndListsInBoundedMemory() throws {
        try checkLargeFile(format: "cdoc", key: try CDOCTestKey.make(.p384, in: work, name: "ec"))
    }

    func testA200MegabyteCDOC2DecryptsToStandardOutputAFolderAndListsInBoundedMemory() throws {
        try checkLargeFile(format: "cdoc2", key: try CDOCTestKey.make(.p384, in: work, name: "ec"))
    }

    /// CDOC 1.0 wraps several files in a DDOC (XML, each file base64): it is parsed as it is
    /// decrypted, file by file, never held whole (it was, up to 512 MiB).
    func testACDOC10DDOCOfSeveralLargeFilesDecryptsInBoundedMemory() throws {
        let rsa = try CDOCTestKey.make(.rsa, in: work, name: "rsa")
        let names = (1...4).map { "part\($0).bin" }
        try FileManager.default.createDirectory(atPath: path("in"), withIntermediateDirectories: true)
        for name in names { try writeRandomFile(path("in/\(name)"), size: 40 << 20) }
        let container = path("several.cdoc")
        assertSuccess(try asicfs(["encrypt", container] + names.map { path("in/\($0)") }
                                 + ["--recipient", rsa.certificatePath, "--format", "cdoc1.0"], timeout: 600))
        let containerSize = try size(container)
        let folderPeak = try peak(["decrypt", container, "-d", path("out"), "--method", "key", "key-file=\(rsa.keyPath)"])
        for name in names { try assertSame(path("in/\(name)"), path("out/\(name)")) }
        XCTAssertLessThan(folderPeak, bound, "-d of a DDOC of \(containerSize) bytes")
        let printedPeak = try peak(["decrypt", container, "--stdout", names[2], "--method", "key", "key-file=\(rsa.keyPath)"],
                                   output: path("printed.bin"))
        try assertSame(path("in/\(names[2])"), path("printed.bin"))
        XCTAssertLessThan(printedPeak, bound, "--stdout of one file of a DDOC of \(containerSize) bytes")
    }

    /// libdigidoc's zlib layer (the payload is a zlib stream of the file): inflated as it is
    /// decrypted (it was buffered, up to 512 MiB). Made here with the project's own XML writer.
    func testAZlibCompressedCDOC1DecryptsInBoundedMemory() throws {
        let ec = try CDOCTestKey.make(.p256, in: work, name: "ec")
        let plain = path("plain.bin")
        try writeRandomFile(plain, size: 160 << 20)
        let original = [UInt8](try read(plain))
        var compressed: [UInt8] = []
        let deflater = try ZlibDeflater(level: 1)
        try original.withUnsafeBytes { try deflater.feed($0) { compressed += $0 } }
        try deflater.finish { compressed += $0 }
        let transportKey = try SecureRandom.secret(32)
        let iv = try SecureRandom.bytes(AESGCM.ivLength)
        let sealed = try AESGCM.seal(key: transportKey, iv: iv, compressed)
        compressed = []
        assertSuccess(try runTool("/usr/bin/openssl", ["x509", "-in", ec.certificatePath, "-outform", "DER", "-out", path("ec.der")]))
        let certificate = try Certificate(der: [UInt8](try read(path("ec.der"))))
        var xml = CDOC1XML(documentFormat: "ENCDOC-XML|1.1")
        xml.open(mimeType: CDOC1Names.zlibMimeType, method: CDOC1Names.aes256GCM)
        xml.encryptedKey(for: certificate, try CDOC1KeyTransport.wrap(transportKey, for: certificate, documentFormat: "ENCDOC-XML|1.1"))
        xml.payload(iv + sealed.ciphertext + sealed.tag)
        xml.close(properties: [("DocumentFormat", "ENCDOC-XML|1.1"), ("Filename", "plain.bin"),
                               ("OriginalSize", "\(original.count)"), ("OriginalMimeType", "application/octet-stream")])
        let container = try write("zlib.cdoc", Data(xml.bytes))
        let containerSize = try size(container)
        let folderPeak = try peak(["decrypt", container, "-d", path("out"), "--method", "key", "key-file=\(ec.keyPath)"])
        try assertSame(plain, path("out/plain.bin"))
        XCTAssertLessThan(folderPeak, bound, "-d of a zlib CDOC 1.1 of \(containerSize) bytes")
    }

    /// `--stdout` holds the file until it all authenticated; meanwhile its plaintext is in no
    /// file under $TMPDIR, /var/tmp or the working folder, the spool it is in (an unnamed file
    /// in $TMPDIR, seen through /proc) does not hold it readable, and nothing was printed yet.
    func testStandardOutputSpoolsEncryptedAndPrintsOnlyAfterAuthentication() throws {
        let ec = try CDOCTestKey.make(.p256, in: work, name: "ec")
        let marker = "asicfs-plaintext-marker-\(UUID().uuidString)"
        let source = work.deletingLastPathComponent().appendingPathComponent("source")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        let plain = source.appendingPathComponent("letter.txt").path
        let text = String(repeating: "\(marker) line of a letter that must stay private\n", count: 40_000)
        try Data(text.utf8).write(to: URL(fileURLWithPath: plain))
        let container = path("letter.cdoc")
        assertSuccess(try asicfs(["encrypt", container, plain, "--recipient", ec.certificatePath]))
        let temporary = path("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let gate = source.appendingPathComponent("gate").path
        FileManager.default.createFile(atPath: gate, contents: nil)

        let started = try startTool(Self.binary, ["decrypt", container, "--stdout", "letter.txt", "--method", "key", "key-file=\(ec.keyPath)"],
                                    environment: ["ASICFS_TEST_HOLD_STDOUT_SPOOL": gate, "TMPDIR": temporary])
        waitForFile(gate + ".held", seconds: 120)
        for folder in [temporary, "/var/tmp", work.path] {
            let search = try runTool("/bin/grep", ["-rlF", "--no-messages", marker, folder])
            XCTAssertEqual(search.stdout, "", "the plaintext is in no file under \(folder)")
        }
        XCTAssertEqual(try size(started.stdout.path), 0, "nothing printed before the whole file authenticated")
        let descriptors = "/proc/\(started.process.processIdentifier)/fd"
        let spools = try FileManager.default.contentsOfDirectory(atPath: descriptors).filter {
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: "\(descriptors)/\($0)")) ?? "").hasPrefix(temporary + "/#")
        }
        XCTAssertEqual(spools.count, 1, "the file waits in one unnamed spool in $TMPDIR")
        for spool in spools {
            let bytes = try read("\(descriptors)/\(spool)")
            XCTAssertEqual(bytes.count, text.utf8.count, "the spool holds the whole file")
            XCTAssertNil(bytes.range(of: Data(marker.utf8)), "the spool holds it encrypted")
        }
        try FileManager.default.removeItem(atPath: gate)
        started.process.waitUntilExit()
        XCTAssertEqual(started.process.terminationStatus, 0)
        XCTAssertEqual(try read(started.stdout.path), Data(text.utf8), "printed byte exact after the hold")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: temporary), [], "nothing left in $TMPDIR")
    }
}

import Crypto
import Foundation
import TestTools
import XCTest
@testable import CDOC

/// CDOC 1.x against independent implementations: a Python (`cryptography`) writer and reader made
/// from the format notes, and Debian's libdigidoc (`cdigidoc`, CDOC 1.0 with RSA).
final class CDOC1InteropTests: CDOCTestCase {
    func testFilesThePythonWriterMakesDecryptByteExact() throws {
        let peer = try CDOC1Peer.install(in: folder)
        let keys = [try key(.rsa, "rsa"), try key(.p256, "p256"), try key(.p384, "p384")]
        let one = try write("letter.txt", randomBytes(3000))
        let two = try write("photo.bin", randomBytes(100_000))
        for files in [[one], [one, two]] {
            let made = try Shell.run("/usr/bin/python3", [peer, "write", path("py.cdoc")] + keys.map(\.certificatePath) + ["--"] + files)
            XCTAssertEqual(made.status, 0, made.stderr)
            XCTAssertEqual(try reader(path("py.cdoc")).format, .cdoc11)
            for recipient in keys {
                let sink = try decrypt(path("py.cdoc"), with: recipient)
                XCTAssertEqual(sink.files.map(\.name), files.map { URL(fileURLWithPath: $0).lastPathComponent })
                XCTAssertEqual(sink.files.map(\.bytes), try files.map { try read($0) }, "\(recipient.kind)")
            }
        }
    }

    func testFilesAsicfsWritesOpenInThePythonReader() throws {
        let peer = try CDOC1Peer.install(in: folder)
        let keys = [try key(.rsa, "rsa"), try key(.p256, "p256"), try key(.p384, "p384")]
        for files in [[("one.txt", randomBytes(2000))], [("a.txt", randomBytes(10)), ("b.bin", randomBytes(50_000))]] {
            let file = try encrypt(files, for: keys)
            for recipient in keys {
                let out = folder.appendingPathComponent("py-\(recipient.kind.rawValue)-\(files.count)")
                try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
                let opened = try Shell.run("/usr/bin/python3", [peer, "read", file, recipient.keyPath, out.path])
                XCTAssertEqual(opened.status, 0, opened.stderr)
                for (name, bytes) in files {
                    XCTAssertEqual(try read(out.appendingPathComponent(name).path), bytes, "\(recipient.kind) \(name)")
                }
            }
        }
    }

    func testCDOC10FromLibdigidocDecryptsByteExact() throws {
        let recipient = try key(.rsa, "rsa")
        let original = try write("report.bin", randomBytes(3000))
        // -encrypt-sk wraps the file in a DDOC (libdigidoc's recommended form); -encrypt writes it raw.
        for mode in ["-encrypt-sk", "-encrypt"] {
            let made = try Shell.run("/usr/bin/cdigidoc", ["-encrecv", recipient.certificatePath, mode, original, "-out", path("ld.cdoc")])
            XCTAssertEqual(made.status, 0, made.stdout + made.stderr)
            XCTAssertEqual(try reader(path("ld.cdoc")).format, .cdoc10)
            XCTAssertEqual(try reader(path("ld.cdoc")).listedFiles.map(\.name), ["report.bin"])
            let sink = try decrypt(path("ld.cdoc"), with: recipient)
            XCTAssertEqual(sink.files.map(\.name), ["report.bin"], mode)
            XCTAssertEqual(sink.files.map(\.bytes), [try read(original)], mode)
        }
    }

    func testCDOC10AsicfsWritesOpensInLibdigidoc() throws {
        let recipient = try key(.rsa, "rsa")
        try recipient.pkcs12(at: path("rsa.p12"), passphrase: "1234")
        // Block-aligned and not: the X9.23 + PKCS#7 double padding must come out exactly.
        for size in [0, 16, 1000] {
            let bytes = randomBytes(size)
            let file = try encrypt([("doc.bin", bytes)], for: [recipient], format: .cdoc10)
            // This cdigidoc's -decrypt-sk fails to parse even its own -encrypt-sk output ("XML parsing
            // error"); -decrypt is its reader of CDOC 1.0 files without a DDOC inside.
            let opened = try Shell.run("/usr/bin/cdigidoc", ["-decrypt", file, "1234", path("rsa.p12"), "-out", path("ld.out")])
            // "CDigiDoc|ERROR|N": ERROR is the decryption's outcome (119 when the key does not open
            // it). N was seen 1 instead of 0 about once in 120 runs, and again 0 for the same file
            // and key run again 40 times: cdigidoc's, not the file's. The bytes are checked below.
            XCTAssertTrue(opened.stdout.contains("CDigiDoc|0|"), opened.stdout + opened.stderr)
            XCTAssertEqual(try read(path("ld.out")), bytes, "size \(size)")
        }
    }
}

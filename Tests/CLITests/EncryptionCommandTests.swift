import Foundation
import TestTools
import XCTest

/// `asicfs encrypt`, `decrypt` and `ls` of encrypted containers, as a person or a script runs them.
final class EncryptionCommandTests: CLITestCase {
    private func key(_ kind: CDOCTestKey.Kind, _ name: String) throws -> CDOCTestKey {
        try CDOCTestKey.make(kind, in: work, name: name)
    }

    private func contents(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    func testEncryptThenDecryptWithEveryFileMethodAndFormat() throws {
        let rsa = try key(.rsa, "rsa")
        let ec = try key(.p384, "ec")
        try rsa.pkcs12(at: path("rsa.p12"), passphrase: "secret phrase")
        let passphrase = try write("p12.pass", "secret phrase\n")
        let letter = try write("letter.txt", "Tere!\n")
        let photo = path("photo.bin")
        try writeRandomFile(photo, size: 200_000)
        for (format, files, recipients) in [("cdoc", [letter, photo], [rsa, ec]), ("cdoc1.0", [letter], [rsa])] {
            let out = path("out-\(format).cdoc")
            assertSuccess(try asicfs(["encrypt", out] + files + recipients.flatMap { ["--recipient", $0.certificatePath] } + ["--format", format]))
            var methods: [[String]] = [["--method", "pkcs12", "file=\(path("rsa.p12"))", "passphrase-file=\(passphrase)"],
                                       ["--method", "key", "key-file=\(rsa.keyPath)"]]
            if recipients.count == 2 { methods.append(["--method", "key", "key-file=\(ec.keyPath)", "cert-file=\(ec.certificatePath)"]) }
            for (index, method) in methods.enumerated() {
                let folder = path("plain-\(format)-\(index)")
                assertSuccess(try asicfs(["decrypt", out, "-d", folder] + method))
                XCTAssertEqual(contents(folder), files.map { URL(fileURLWithPath: $0).lastPathComponent }.sorted(), "\(format) \(method)")
                for file in files {
                    XCTAssertEqual(try read(folder + "/" + URL(fileURLWithPath: file).lastPathComponent), try read(file))
                }
            }
        }
    }

    func testLsShowsFormatRecipientsAndFilesWithoutAKeyAndValidatesAgainstTheSchema() throws {
        let rsa = try key(.rsa, "Mari Maasikas")
        let ec = try key(.p256, "Digi ID")
        let out = path("two.cdoc")
        assertSuccess(try asicfs(["encrypt", out, try write("a.txt", "a"), try write("b.txt", "bb"), "-r", rsa.certificatePath, "-r", ec.certificatePath]))
        let table = try asicfs(["ls", out])
        assertSuccess(table)
        XCTAssertTrue(table.stdout.contains("CDOC 1.1"), table.stdout)
        let lines = table.stdout.split(separator: "\n")
        XCTAssertTrue(lines.contains { $0.contains("recipient: rsa-certificate") && $0.contains("CN=Mari Maasikas") }, table.stdout)
        XCTAssertTrue(lines.contains { $0.contains("recipient: ec-certificate") && $0.contains("CN=Digi ID") }, table.stdout)
        let json = try envelope(try asicfs(["ls", out, "--json"]), command: "ls", status: 0)
        XCTAssertEqual(json["format"] as? String, "CDOC 1.1")
        XCTAssertEqual(json["encrypted"] as? Bool, true)
        XCTAssertEqual((json["recipients"] as? [[String: Any]])?.map { $0["kind"] as? String }, ["rsa-certificate", "ec-certificate"])
        XCTAssertEqual(dataFiles(of: json).map { $0["name"] as? String }, ["a.txt", "b.txt"])
        XCTAssertEqual(dataFiles(of: json).map { $0["size"] as? Int }, [1, 2])
        // The same commands' JSON on success and failure.
        let decrypted = try envelope(try asicfs(["decrypt", out, "-d", path("j"), "--method", "key", "key-file=\(ec.keyPath)", "--json"]),
                                     command: "decrypt", status: 0)
        XCTAssertEqual(decrypted["decrypted"] as? [String], [path("j") + "/a.txt", path("j") + "/b.txt"])
        _ = try envelope(try asicfs(["encrypt", path("j.cdoc"), path("a.txt"), "-r", rsa.certificatePath, "--json"]), command: "encrypt", status: 0)
        _ = try envelope(try asicfs(["decrypt", out, "-d", path("k"), "--method", "key", "key-file=\(try key(.rsa, "stranger").keyPath)", "--json"]),
                         command: "decrypt", status: 1, code: "not-a-recipient")
    }

    func testStdoutPrintsOneFileAndNothingElse() throws {
        let ec = try key(.p384, "ec")
        let out = path("s.cdoc")
        assertSuccess(try asicfs(["encrypt", out, try write("a.txt", "first\n"), try write("b.txt", "second\n"), "-r", ec.certificatePath]))
        let result = try asicfs(["decrypt", out, "--stdout", "b.txt", "--method", "key", "key-file=\(ec.keyPath)"])
        assertSuccess(result)
        XCTAssertEqual(result.stdout, "second\n")
        assertFailure(try asicfs(["decrypt", out, "--stdout", "c.txt", "--method", "key", "key-file=\(ec.keyPath)"]), mentions: ["c.txt"])
    }

    func testFailuresAreOneLineWithTheRightStatusAndWriteNothing() throws {
        let meant = try key(.rsa, "meant")
        let stranger = try key(.p384, "stranger")
        let out = path("f.cdoc")
        assertSuccess(try asicfs(["encrypt", out, try write("a.txt", "a"), "-r", meant.certificatePath]))
        let folder = path("target")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Not a recipient; the wrong PKCS#12 passphrase; a tampered payload; a name already there.
        assertFailure(try asicfs(["decrypt", out, "-d", folder, "--method", "key", "key-file=\(stranger.keyPath)"]), mentions: ["not one of the recipients"])
        try meant.pkcs12(at: path("m.p12"), passphrase: "right")
        assertFailure(try asicfs(["decrypt", out, "-d", folder, "--method", "pkcs12", "file=\(path("m.p12"))",
                                  "passphrase-file=\(try write("wrong.pass", "wrong"))"]), mentions: ["passphrase"])
        var text = String(decoding: try read(out), as: UTF8.self)
        let payload = text.range(of: "<denc:CipherValue>", options: .backwards)!
        let index = text.index(payload.upperBound, offsetBy: 30)
        text.replaceSubrange(index...index, with: text[index] == "A" ? "B" : "A")
        let tampered = try write("tampered.cdoc", text)
        assertFailure(try asicfs(["decrypt", tampered, "-d", folder, "--method", "key", "key-file=\(meant.keyPath)"]), mentions: ["authenticate"])
        XCTAssertEqual(contents(folder), [], "nothing written, no temporary folder left")
        _ = try write("a.txt", "mine", in: URL(fileURLWithPath: folder))
        assertFailure(try asicfs(["decrypt", out, "-d", folder, "--method", "key", "key-file=\(meant.keyPath)"]), mentions: ["exists already"])
        XCTAssertEqual(contents(folder), ["a.txt"])
        XCTAssertEqual(String(decoding: try read(folder + "/a.txt"), as: UTF8.self), "mine")
        // Not an encrypted container at all; usage errors.
        assertFailure(try asicfs(["decrypt", try write("plain.txt", "hello"), "--method", "key", "key-file=\(meant.keyPath)"]),
                      mentions: ["not an encrypted container"])
        assertFailure(try asicfs(["decrypt", out, "--method", "keyy"]), status: 2, mentions: ["did you mean 'key'"])
        assertFailure(try asicfs(["decrypt", out, "--method", "key"]), status: 2, mentions: ["key-file=PATH"])
        assertFailure(try asicfs(["decrypt", out, "--method", "key", "key-file=x", "role=boss"]), status: 2, mentions: ["unknown parameter 'role'"])
        XCTAssertEqual(contents(work.path).filter { $0.hasPrefix(".asicfs-") }, [])
    }

    func testEncryptNeverReplacesAndLeavesNothingOnFailure() throws {
        let rsa = try key(.rsa, "rsa")
        let ec = try key(.p384, "ec")
        let file = try write("a.txt", "a")
        let existing = try write("there.cdoc", "keep me")
        assertFailure(try asicfs(["encrypt", existing, file, "-r", rsa.certificatePath]), mentions: ["exists already"])
        XCTAssertEqual(String(decoding: try read(existing), as: UTF8.self), "keep me")
        assertFailure(try asicfs(["encrypt", path("old.cdoc"), file, "-r", ec.certificatePath, "--format", "cdoc1.0"]), mentions: ["RSA"])
        assertFailure(try asicfs(["encrypt", path("pw.cdoc"), file, "--password-file", try write("pw", "pw")]), mentions: ["CDOC2"])
        assertFailure(try asicfs(["encrypt", path("none.cdoc"), file]), status: 2, mentions: ["--recipient"])
        assertFailure(try asicfs(["encrypt", path("bad.cdoc"), file, "-r", file]), status: 2, mentions: ["no certificate"])
        assertFailure(try asicfs(["encrypt", path("missing.cdoc"), path("nope.txt"), "-r", rsa.certificatePath]), mentions: ["nope.txt"])
        XCTAssertEqual(contents(work.path).filter { $0.hasSuffix(".cdoc") || $0.hasPrefix(".asicfs-") }, ["there.cdoc"])
    }

    /// Without passphrase-file= the Secrets module asks: pinentry here (a fake one). The passphrase
    /// is in no command line or environment; a cancel decrypts nothing.
    func testThePKCS12PassphraseComesFromPinentry() throws {
        let rsa = try key(.rsa, "rsa")
        try rsa.pkcs12(at: path("me.p12"), passphrase: "pinentry phrase")
        let out = path("p.cdoc")
        assertSuccess(try asicfs(["encrypt", out, try write("a.txt", "via pinentry"), "-r", rsa.certificatePath]))
        let log = path("pinentry.log")
        let cancelling = path("cancelling-pinentry")
        try FakePinentry.write(to: cancelling, pin: nil, log: log)
        let cancelled = try asicfs(["decrypt", out, "-d", path("c"), "--method", "pkcs12", "file=\(path("me.p12"))", "-o", "pinentry=\(cancelling)", "--json"])
        _ = try envelope(cancelled, command: "decrypt", status: 1, code: "cancelled")
        XCTAssertEqual(contents(path("c")), [])
        let answering = path("answering-pinentry")
        try FakePinentry.write(to: answering, pin: "pinentry phrase", log: log)
        assertSuccess(try asicfs(["decrypt", out, "-d", path("d"), "--method", "pkcs12", "file=\(path("me.p12"))", "-o", "pinentry=\(answering)"]))
        XCTAssertEqual(String(decoding: try read(path("d") + "/a.txt"), as: UTF8.self), "via pinentry")
        let transcript = try String(contentsOfFile: log, encoding: .utf8)
        XCTAssertTrue(transcript.contains("SETPROMPT Passphrase for me.p12"), transcript)
        XCTAssertFalse(transcript.contains("pinentry phrase"), "the passphrase is in no environment or command line")
    }

    func testPythonReaderOpensWhatTheCommandWrites() throws {
        let peer = try CDOC1Peer.install(in: work)
        let ec = try key(.p256, "ec")
        let out = path("py.cdoc")
        assertSuccess(try asicfs(["encrypt", out, try write("x.txt", "from asicfs"), "-r", ec.certificatePath]))
        let folder = path("py")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let opened = try runTool("/usr/bin/python3", [peer, "read", out, ec.keyPath, folder])
        XCTAssertEqual(opened.status, 0, opened.stderr)
        XCTAssertEqual(String(decoding: try read(folder + "/x.txt"), as: UTF8.self), "from asicfs")
    }
}

import Foundation
import TestTools
import XCTest

/// `asicfs encrypt --format cdoc2`, `decrypt` and `ls` of CDOC2 files, as a person or a script
/// runs them; containers the command cannot write (symmetric key, key server) come from the
/// independent Python writer (contrib/testpki/cdoc2.py).
final class CDOC2CommandTests: CLITestCase {
    private static let python = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("contrib/testpki/cdoc2.py").path

    private func key(_ kind: CDOCTestKey.Kind, _ name: String) throws -> CDOCTestKey {
        try CDOCTestKey.make(kind, in: work, name: name)
    }

    private func contents(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    private func python(_ arguments: [String]) throws {
        let made = try Shell.run("/usr/bin/python3", [Self.python] + arguments)
        XCTAssertEqual(made.status, 0, made.stderr)
    }

    private func publicKey(of key: CDOCTestKey) throws -> String {
        let out = path(URL(fileURLWithPath: key.keyPath).deletingPathExtension().lastPathComponent + ".pub")
        let exported = try Shell.run("/usr/bin/openssl", ["pkey", "-in", key.keyPath, "-pubout", "-out", out])
        XCTAssertEqual(exported.status, 0, exported.stderr)
        return out
    }

    /// RSA, EC and password recipients in one CDOC2; each opens it, byte for byte, through
    /// `-d` and `--stdout`, and the independent reader opens it too. (Before the container was
    /// kept open while decrypting, every CDOC2 decryption failed with "Bad file descriptor".)
    func testEncryptForRSAECAndPasswordThenDecryptWithEachMethod() throws {
        let rsa = try key(.rsa, "rsa")
        let ec = try key(.p384, "ec")
        try rsa.pkcs12(at: path("rsa.p12"), passphrase: "p12 phrase")
        let p12Passphrase = try write("p12.pass", "p12 phrase\n")
        let password = try write("password", "Õige parool\n")
        let letter = try write("kiri.txt", "Tere, Mari!\n")
        let photo = path("photo.bin")
        try writeRandomFile(photo, size: 300_000)
        let out = path("letter.cdoc2")
        let encrypted = try envelope(try asicfs(["encrypt", out, letter, photo, "--format", "cdoc2", "-r", rsa.certificatePath,
                                                 "--recipient", ec.certificatePath, "--password-file", password, "--json"]),
                                     command: "encrypt", status: 0)
        XCTAssertEqual(encrypted["format"] as? String, "CDOC2")
        XCTAssertEqual(encrypted["recipients"] as? Int, 3)
        XCTAssertEqual(Array(try read(out).prefix(4)), Array("CDOC".utf8))

        let listed = try envelope(try asicfs(["ls", out, "--json"]), command: "ls", status: 0)
        XCTAssertEqual(listed["format"] as? String, "CDOC2")
        XCTAssertEqual((listed["recipients"] as? [[String: Any]])?.compactMap { $0["kind"] as? String },
                       ["rsa-public-key", "ec-public-key", "password"])

        let methods: [(String, [String])] = [
            ("key-rsa", ["--method", "key", "key-file=\(rsa.keyPath)"]),
            ("key-ec", ["--method", "key", "key-file=\(ec.keyPath)"]),
            ("pkcs12", ["--method", "pkcs12", "file=\(path("rsa.p12"))", "passphrase-file=\(p12Passphrase)"]),
            ("password", ["--method", "password", "password-file=\(password)"]),
        ]
        for (name, method) in methods {
            let folder = path("plain-\(name)")
            let decrypted = try envelope(try asicfs(["decrypt", out, "-d", folder, "--json"] + method), command: "decrypt", status: 0)
            XCTAssertEqual(decrypted["format"] as? String, "CDOC2", name)
            XCTAssertEqual(contents(folder), ["kiri.txt", "photo.bin"], name)
            XCTAssertEqual(try read(folder + "/kiri.txt"), try read(letter), name)
            XCTAssertEqual(try read(folder + "/photo.bin"), try read(photo), name)
            let printed = try asicfs(["decrypt", out, "--stdout", "kiri.txt"] + method)
            assertSuccess(printed)
            XCTAssertEqual(printed.stdout, "Tere, Mari!\n", name)
        }
        // The independent reader opens what asicfs wrote.
        try python(["decrypt", out, path("py"), "--key", ec.keyPath])
        XCTAssertEqual(try read(path("py/photo.bin")), try read(photo))
    }

    /// A symmetric-key recipient (base64 key on the file's first line), chosen by its label
    /// when there are several; the wrong key is one line and writes nothing.
    func testSecretMethodOpensASymmetricKeyRecipientByLabel() throws {
        let first = [UInt8](repeating: 0x11, count: 32), second = (0 ..< 32).map { UInt8($0) }
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        let file = try write("notes.txt", "salajane\n")
        let out = path("secret.cdoc2")
        try python(["encrypt", out, file, "--secret", hex(first), "office", "--secret", hex(second), "home"])
        let secretFile = try write("home.key", Data(second).base64EncodedString() + "\n")
        assertFailure(try asicfs(["decrypt", out, "-d", path("none"), "--method", "secret", "secret-file=\(secretFile)"]),
                      mentions: ["several recipients"])
        assertSuccess(try asicfs(["decrypt", out, "-d", path("home"), "--method", "secret", "secret-file=\(secretFile)", "label=home"]))
        XCTAssertEqual(try read(path("home/notes.txt")), try read(file))
        let wrong = try envelope(try asicfs(["decrypt", out, "-d", path("wrong"), "--method", "secret", "secret-file=\(secretFile)",
                                             "label=office", "--json"]), command: "decrypt", status: 1, code: "wrong-key")
        XCTAssertNotNil(wrong["error"])
        XCTAssertEqual(contents(path("wrong")), [])
    }

    /// A key-server recipient is listed with its server, and decrypting with its key says that
    /// the key server is needed (asicfs does not contact it).
    func testLsOfAKeyServerRecipientSaysItNeedsTheKeyServer() throws {
        let card = try key(.p384, "card")
        let out = path("server.cdoc2")
        try python(["encrypt", out, try write("a.txt", "a"), "--keyserver", try publicKey(of: card)])
        let json = try envelope(try asicfs(["ls", out, "--json"]), command: "ls", status: 0)
        let recipients = json["recipients"] as? [[String: Any]] ?? []
        XCTAssertEqual(recipients.map { $0["kind"] as? String }, ["key-server"])
        XCTAssertEqual(recipients.first?["key_server"] as? String, "00000000-0000-0000-0000-000000000000")
        let table = try asicfs(["ls", out])
        assertSuccess(table)
        XCTAssertTrue(table.stdout.contains("needs the key server 00000000-0000-0000-0000-000000000000"), table.stdout)
        _ = try envelope(try asicfs(["decrypt", out, "-d", path("p"), "--method", "key", "key-file=\(card.keyPath)", "--json"]),
                         command: "decrypt", status: 1, code: "unsupported")
        assertFailure(try asicfs(["decrypt", out, "-d", path("p"), "--method", "key", "key-file=\(card.keyPath)"]), mentions: ["key server"])
        XCTAssertEqual(contents(path("p")), [])
    }
}

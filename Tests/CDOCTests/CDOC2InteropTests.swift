import Crypto
import Foundation
import XCTest
@testable import CDOC

/// Containers written by the independent Python writer (contrib/testpki/cdoc2.py, Python's
/// tarfile in PAX format and python3-cryptography) decrypt byte-exact in asicfs; its bad
/// containers fail with the right error and leave nothing in the sink.
final class CDOC2InteropTests: XCTestCase {
    let files: [(String, [UInt8])] = [("a.txt", Array("first\n".utf8)), ("b.bin", randomBytes(200_000)),
                                      ("pikk_nimi_☠_" + String(repeating: "A", count: 120), Array("long".utf8))]

    private func assertSameFiles(_ sink: MemorySink, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(sink.files.map(\.name), files.map(\.0), file: file, line: line)
        for (name, data) in files { XCTAssertEqual(sink.byName[name], data, name, file: file, line: line) }
    }

    func testPythonContainersForEveryRecipientKindDecrypt() throws {
        let scratch = try CDOC2Scratch()
        let p256 = try scratch.makeKey("ec:P-256", named: "p256"), p384 = try scratch.makeKey("ec:P-384", named: "p384")
        let rsa = try scratch.makeKey("rsa", named: "rsa")
        let key = randomBytes(32)
        try scratch.pythonEncrypt("py.cdoc2", files: files, [
            "--ec", p256.publicPath, "free text ☺", "--ec", p384.publicPath, "data:V=1&FILE=ec.pem&TYPE=pub_key",
            "--rsa", rsa.publicPath, "data:,v=1&type=cert&cn=Org%20e-seal&cert_sha1=00",
            "--secret", hex(key), "data:,LABEL=mylabel&TYPE=secret&V=1", "--password", "parool", "data:,label=pw&type=pw&v=1",
            "--iterations", "1000",
        ])
        let (reader, descriptor) = try scratch.open("py.cdoc2")
        close(descriptor)
        XCTAssertEqual(reader.recipients.map(\.kind), [.ecPublicKey, .ecPublicKey, .rsaPublicKey, .symmetricKey, .password])
        XCTAssertEqual(reader.recipients.map(\.displayName), ["free text ☺", "ec.pem", "Org e-seal", "mylabel", "pw"])
        for privatePath in [p256.privatePath, p384.privatePath, rsa.privatePath] {
            assertSameFiles(try scratch.decrypt("py.cdoc2", .key(try scratch.recipientKey(privatePath))))
        }
        assertSameFiles(try scratch.decrypt("py.cdoc2", .symmetricKey(SecretBytes(key), label: "mylabel")))
        assertSameFiles(try scratch.decrypt("py.cdoc2", .password(secret("parool"), label: nil)))
    }

    func testLibcdocStyleTarsAndPAXGlobalHeadersRead() throws {
        // libcdoc's pre-POSIX headers (no ustar magic, PAX path for long/non-ASCII names) and a
        // `g` member before the files, which is skipped.
        let scratch = try CDOC2Scratch()
        let key = randomBytes(32)
        for style in ["libcdoc", "global"] {
            try scratch.pythonEncrypt("\(style).cdoc2", files: files, ["--secret", hex(key), "s", "--evil", style])
            assertSameFiles(try scratch.decrypt("\(style).cdoc2", .symmetricKey(SecretBytes(key), label: nil)))
        }
        XCTAssertEqual(Array(try scratch.read("a.txt")), files[0].1)
    }

    func testWrongSecretsAreAWrongKey() throws {
        let scratch = try CDOC2Scratch()
        let rsa = try scratch.makeKey("rsa", named: "rsa"), otherRSA = try scratch.makeKey("rsa", named: "other")
        try scratch.pythonEncrypt("py.cdoc2", files: files, ["--secret", hex(randomBytes(32)), "s", "--password", "right", "p",
                                                             "--rsa", rsa.publicPath, "r", "--iterations", "1000"])
        try scratch.expectFailure("py.cdoc2", .password(secret("wrong"), label: nil), .wrongKey)
        try scratch.expectFailure("py.cdoc2", .symmetricKey(SecretBytes(randomBytes(32)), label: nil), .wrongKey)
        try scratch.expectFailure("py.cdoc2", .key(try scratch.recipientKey(otherRSA.privatePath)), .noRecipient)
    }

    func testThe2024LabelsAreAWrongPasswordWithoutFallback() throws {
        let scratch = try CDOC2Scratch()
        try scratch.pythonEncrypt("2024.cdoc2", files: files, ["--password", "myPlainTextPassword", "p", "--iterations", "1000", "--labels2024"])
        try scratch.expectFailure("2024.cdoc2", .password(secret("myPlainTextPassword"), label: nil), .wrongKey)
        let (reader, descriptor) = try scratch.open("2024.cdoc2")
        defer { close(descriptor) }
        XCTAssertThrowsError(try reader.decrypt(with: .password(secret("myPlainTextPassword"), label: nil), into: MemorySink())) {
            XCTAssertEqual("\($0)", "wrong key or password")
        }
    }

    func testKeyServerCapsulesAreListedAndNeedTheServer() throws {
        let scratch = try CDOC2Scratch()
        let card = try scratch.makeKey("ec:P-384", named: "card")
        try scratch.pythonEncrypt("ks.cdoc2", files: files, ["--keyserver", card.publicPath])
        let (reader, descriptor) = try scratch.open("ks.cdoc2")
        close(descriptor)
        XCTAssertEqual(reader.recipients.map(\.kind), [.keyServer])
        XCTAssertEqual(reader.recipients.first?.keyServerID, "00000000-0000-0000-0000-000000000000")
        XCTAssertEqual(reader.recipients.first?.transactionID, "KC0123456789abcdef01")
        XCTAssertEqual(reader.recipients.first?.displayName, "SERVER,KEY")
        XCTAssertEqual(reader.recipients.first?.publicKey, try scratch.publicKey(card.publicPath).rawKeyBytes())
        try scratch.expectFailure("ks.cdoc2", .key(try scratch.recipientKey(card.privatePath)), .needsKeyServer)
    }

    func testKeySharesAreListedAndUnsupported() throws {
        let scratch = try CDOC2Scratch()
        try scratch.pythonEncrypt("shares.cdoc2", files: files, ["--keyshares"])
        let (reader, descriptor) = try scratch.open("shares.cdoc2")
        close(descriptor)
        XCTAssertEqual(reader.recipients.map(\.kind), [.keyShares])
        XCTAssertEqual(reader.recipients.first?.displayName, "etsi/PNOEE-30303039914")
        try scratch.expectFailure("shares.cdoc2", .password(secret("pw"), label: nil), .unsupported)
    }

    func testLinksFoldersTraversalControlCharactersAndDuplicatesAreRefused() throws {
        let scratch = try CDOC2Scratch()
        let key = randomBytes(32)
        for evil in ["symlink", "dir", "dotdot", "control", "dup"] {
            try scratch.pythonEncrypt("\(evil).cdoc2", files: files, ["--secret", hex(key), "s", "--evil", evil])
            try scratch.expectFailure("\(evil).cdoc2", .symmetricKey(SecretBytes(key), label: nil), .unsafeName)
        }
        // The refusal names the file without its escape sequence.
        let (reader, descriptor) = try scratch.open("control.cdoc2")
        defer { close(descriptor) }
        XCTAssertThrowsError(try reader.decrypt(with: .symmetricKey(SecretBytes(key), label: nil), into: MemorySink())) {
            XCTAssertFalse("\($0)".contains("\u{1B}"))
            XCTAssertTrue("\($0)".contains("bad\\u{1b}[31mname"), "\($0)")
        }
    }

    func testMoreThan1000EntriesAreRefused() throws {
        let scratch = try CDOC2Scratch()
        let key = randomBytes(32)
        try scratch.pythonEncrypt("many.cdoc2", files: [], ["--secret", hex(key), "s", "--evil", "many"])
        try scratch.expectFailure("many.cdoc2", .symmetricKey(SecretBytes(key), label: nil), .limit)
    }

    func testDataAfterTheTarEndIsRefused() throws {
        let scratch = try CDOC2Scratch()
        let key = randomBytes(32)
        try scratch.pythonEncrypt("trailing.cdoc2", files: files, ["--secret", hex(key), "s", "--trailing"])
        try scratch.expectFailure("trailing.cdoc2", .symmetricKey(SecretBytes(key), label: nil), .malformed)
    }

    func testACompressionBombIsStopped() throws {
        // 400 MiB of zeros deflate to about 400 KB; the guard stops after 64 MiB at ratio > 200.
        let scratch = try CDOC2Scratch()
        let key = randomBytes(32)
        try scratch.pythonEncrypt("bomb.cdoc2", files: [], ["--secret", hex(key), "s", "--bomb", "400"])
        XCTAssertLessThan(try scratch.read("bomb.cdoc2").count, 2_000_000)
        try scratch.expectFailure("bomb.cdoc2", .symmetricKey(SecretBytes(key), label: nil), .limit)
    }
}

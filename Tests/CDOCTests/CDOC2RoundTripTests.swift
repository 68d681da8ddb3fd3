import Crypto
import Foundation
import XCTest
@testable import CDOC

/// asicfs writes, asicfs reads; and asicfs writes, the independent Python reader reads.
final class CDOC2RoundTripTests: XCTestCase {
    let files: [(String, [UInt8])] = [("letter.txt", Array("Tere!\n".utf8)), ("scan.bin", randomBytes(300_000)),
                                      ("empty.txt", []), (String(repeating: "pikk_nimi_õ_", count: 12) + ".pdf", randomBytes(1234))]

    private func assertSameFiles(_ sink: MemorySink, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(sink.files.map(\.name), files.map(\.0), file: file, line: line)
        for (name, data) in files { XCTAssertEqual(sink.byName[name], data, name, file: file, line: line) }
    }

    private func pythonReads(_ scratch: CDOC2Scratch, _ name: String, _ arguments: [String]) throws {
        let out = scratch.path("py-" + name)
        let result = try scratch.python(["decrypt", scratch.path(name), out] + arguments)
        XCTAssertEqual(result.status, 0, result.stderr)
        for (fileName, data) in files {
            XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: out + "/" + fileName))), data, fileName)
        }
    }

    func testECRecipientsOnP256P384AndP521() throws {
        let scratch = try CDOC2Scratch()
        for curve in ["P-256", "P-384", "P-521"] {
            let key = try scratch.makeKey("ec:" + curve, named: curve)
            let name = "\(curve).cdoc2"
            try scratch.write(name, files: files, for: [.publicKey(try scratch.publicKey(key.publicPath), label: "my \(curve) key")])
            let (reader, descriptor) = try scratch.open(name)
            XCTAssertEqual(reader.recipients.map(\.kind), [.ecPublicKey])
            XCTAssertEqual(reader.recipients.first?.displayName, "my \(curve) key")
            XCTAssertEqual(reader.recipients.first?.publicKey, try scratch.publicKey(key.publicPath).rawKeyBytes())
            close(descriptor)
            assertSameFiles(try scratch.decrypt(name, .key(try scratch.recipientKey(key.privatePath))))
            try pythonReads(scratch, name, ["--key", key.privatePath])
        }
    }

    func testRSARecipient() throws {
        let scratch = try CDOC2Scratch()
        let key = try scratch.makeKey("rsa", named: "rsa")
        try scratch.write("rsa.cdoc2", files: files, for: [.publicKey(try scratch.publicKey(key.publicPath), label: "rsa")])
        assertSameFiles(try scratch.decrypt("rsa.cdoc2", .key(try scratch.recipientKey(key.privatePath))))
        try pythonReads(scratch, "rsa.cdoc2", ["--key", key.privatePath])
    }

    func testCertificateRecipientsAreLabelledFromTheCertificate() throws {
        let scratch = try CDOC2Scratch()
        let key = try scratch.makeKey("ec:P-384", named: "card")
        let certificate = try scratch.makeCertificate(key: key.privatePath, subject: "/C=EE/CN=MÄNNIK\\,MARI-LIIS\\,61709210125/SN=MÄNNIK/GN=MARI-LIIS/serialNumber=PNOEE-61709210125",
                                                      named: "card", extensions: ["certificatePolicies=1.3.6.1.4.1.51361.1.1.1"])
        let other = try scratch.makeKey("rsa", named: "org")
        let orgCertificate = try scratch.makeCertificate(key: other.privatePath, subject: "/C=EE/O=Org/CN=Org e-seal", named: "org")
        try scratch.write("cert.cdoc2", files: files, for: [.certificate(certificate), .certificate(orgCertificate)])
        let (reader, descriptor) = try scratch.open("cert.cdoc2")
        close(descriptor)
        XCTAssertEqual(reader.recipients.map(\.kind), [.ecPublicKey, .rsaPublicKey])
        let label = reader.recipients[1].label
        XCTAssertEqual(label, "data:,v=1&cert_sha1=\(hex(Digest.hash(orgCertificate.der, .sha1)))&cn=Org%20e-seal&type=cert")
        XCTAssertEqual(reader.recipients[0].label, "data:,v=1&cn=M%C3%84NNIK%2CMARI-LIIS%2C61709210125&first_name=MARI-LIIS&last_name=M%C3%84NNIK"
                       + "&serial_number=PNOEE-61709210125&type=ID-card")
        XCTAssertEqual(reader.recipients.map(\.displayName), ["MÄNNIK,MARI-LIIS,61709210125", "Org e-seal"])
        assertSameFiles(try scratch.decrypt("cert.cdoc2", .key(try scratch.recipientKey(key.privatePath))))
        assertSameFiles(try scratch.decrypt("cert.cdoc2", .key(try scratch.recipientKey(other.privatePath))))
    }

    func testSymmetricKeyRecipient() throws {
        let scratch = try CDOC2Scratch()
        let key = randomBytes(32)
        try scratch.write("secret.cdoc2", files: files, for: [.symmetricKey(SecretBytes(key), label: "shared")])
        let (reader, descriptor) = try scratch.open("secret.cdoc2")
        close(descriptor)
        XCTAssertEqual(reader.recipients.map(\.kind), [.symmetricKey])
        XCTAssertEqual(reader.recipients.first?.label, "data:,v=1&label=shared&type=secret")
        XCTAssertEqual(reader.recipients.first?.displayName, "shared")
        assertSameFiles(try scratch.decrypt("secret.cdoc2", .symmetricKey(SecretBytes(key), label: nil)))
        try pythonReads(scratch, "secret.cdoc2", ["--secret", hex(key)])
    }

    func testPasswordRecipientUses600000Iterations() throws {
        let scratch = try CDOC2Scratch()
        try scratch.write("pw.cdoc2", files: files, for: [.password(secret("correct horse"), label: "pw")])
        let (reader, descriptor) = try scratch.open("pw.cdoc2")
        close(descriptor)
        guard case .pbkdf2(let salt, let passwordSalt, 1, 600_000) = reader.header.records[0].capsule else {
            return XCTFail("not a PBKDF2 capsule with 600 000 iterations: \(reader.header.records[0].capsule)")
        }
        XCTAssertEqual([salt.count, passwordSalt.count], [32, 32])
        XCTAssertNotEqual(salt, passwordSalt)
        assertSameFiles(try scratch.decrypt("pw.cdoc2", .password(secret("correct horse"), label: nil)))
        try pythonReads(scratch, "pw.cdoc2", ["--password", "correct horse"])
    }

    func testEveryContainerHasAFreshKeyAndNonce() throws {
        let scratch = try CDOC2Scratch()
        let key = SecretBytes(randomBytes(32))
        try scratch.write("one.cdoc2", files: files, for: [.symmetricKey(key, label: "k")])
        try scratch.write("two.cdoc2", files: files, for: [.symmetricKey(key, label: "k")])
        let (one, d1) = try scratch.open("one.cdoc2"), (two, d2) = try scratch.open("two.cdoc2")
        close(d1); close(d2)
        XCTAssertNotEqual(one.header.records[0].encryptedFMK, two.header.records[0].encryptedFMK)
        XCTAssertNotEqual(one.mac, two.mac)
        let nonceOne = Array(try scratch.read("one.cdoc2")[Int(one.payloadOffset) ..< Int(one.payloadOffset) + 12])
        let nonceTwo = Array(try scratch.read("two.cdoc2")[Int(two.payloadOffset) ..< Int(two.payloadOffset) + 12])
        XCTAssertNotEqual(nonceOne, nonceTwo)
    }

    func testAllRecipientKindsInOneContainer() throws {
        let scratch = try CDOC2Scratch()
        let ec = try scratch.makeKey("ec:P-384", named: "ec"), rsa = try scratch.makeKey("rsa", named: "rsa")
        let key = randomBytes(32)
        try scratch.write("all.cdoc2", files: files, for: [
            .publicKey(try scratch.publicKey(ec.publicPath), label: "ec"), .publicKey(try scratch.publicKey(rsa.publicPath), label: "rsa"),
            .symmetricKey(SecretBytes(key), label: "s"), .password(secret("pw"), label: "p"),
        ])
        assertSameFiles(try scratch.decrypt("all.cdoc2", .key(try scratch.recipientKey(ec.privatePath))))
        assertSameFiles(try scratch.decrypt("all.cdoc2", .key(try scratch.recipientKey(rsa.privatePath))))
        assertSameFiles(try scratch.decrypt("all.cdoc2", .symmetricKey(SecretBytes(key), label: "s")))
        assertSameFiles(try scratch.decrypt("all.cdoc2", .password(secret("pw"), label: nil)))
    }

    func testSeveralSymmetricRecipientsAreChosenByLabel() throws {
        let scratch = try CDOC2Scratch()
        let one = randomBytes(32), two = randomBytes(32)
        try scratch.write("two.cdoc2", files: files, for: [.symmetricKey(SecretBytes(one), label: "one"), .symmetricKey(SecretBytes(two), label: "two")])
        try scratch.expectFailure("two.cdoc2", .symmetricKey(SecretBytes(two), label: nil), .severalRecipients)
        try scratch.expectFailure("two.cdoc2", .symmetricKey(SecretBytes(two), label: "three"), .noRecipient)
        try scratch.expectFailure("two.cdoc2", .symmetricKey(SecretBytes(two), label: "one"), .wrongKey)
        assertSameFiles(try scratch.decrypt("two.cdoc2", .symmetricKey(SecretBytes(two), label: "two")))
    }

    func testLargeFileGetsAPAXSize() throws {
        // Past octal 7777777 bytes libcdoc (and asicfs) add a PAX size record.
        let big = [UInt8](repeating: 0x41, count: 2_200_000) + randomBytes(1000)
        let scratch = try CDOC2Scratch()
        let key = randomBytes(32)
        try scratch.write("big.cdoc2", files: [("big.bin", big)], for: [.symmetricKey(SecretBytes(key), label: "s")])
        XCTAssertEqual(try scratch.decrypt("big.cdoc2", .symmetricKey(SecretBytes(key), label: nil)).byName["big.bin"], big)
        XCTAssertTrue(TarWriter.header(name: "big.bin", size: Int64(big.count)).count == 3 * 512)
        let result = try scratch.python(["decrypt", scratch.path("big.cdoc2"), scratch.path("big-out"), "--secret", hex(key)])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: scratch.path("big-out/big.bin")))), big)
    }

    func testUnsafeNamesAreNotWritten() throws {
        let scratch = try CDOC2Scratch()
        for name in ["../x", "a/b", "-rf", "CON", "name."] {
            XCTAssertThrowsError(try scratch.write("bad.cdoc2", files: [(name, [1])], for: [.symmetricKey(SecretBytes(randomBytes(32)), label: "s")])) {
                XCTAssertEqual(($0 as? CDOCError)?.code, .unsafeName)
            }
        }
    }
}

import Crypto
import Foundation
import TestTools
import XCTest
@testable import CDOC

/// Broken, hostile and wrongly keyed CDOC 1.x files: each fails with one line and hands nothing on.
final class CDOC1NegativeTests: CDOCTestCase {
    /// A CDOC 1.1 file whose payload is `payload` as given (for DDOCs asicfs itself would never write).
    func handMade(payload: [UInt8], mimeType: String, for recipient: CDOCTestKey, filename: String = "x",
                  extra: [(String, String)] = []) throws -> String {
        let transportKey = SecretBytes(randomBytes(32))
        let iv = randomBytes(12)
        let sealed = try AESGCM.seal(key: transportKey, iv: iv, payload)
        var xml = CDOC1XML(documentFormat: "ENCDOC-XML|1.1")
        xml.open(mimeType: mimeType, method: CDOC1Names.aes256GCM)
        let certificate = try certificate(recipient)
        xml.encryptedKey(for: certificate, try CDOC1KeyTransport.wrap(transportKey, for: certificate, documentFormat: "ENCDOC-XML|1.1"))
        xml.payload(iv + sealed.ciphertext + sealed.tag)
        xml.close(properties: [("DocumentFormat", "ENCDOC-XML|1.1"), ("Filename", filename)] + extra)
        return try write("hand.cdoc", xml.bytes)
    }

    private func ddoc(_ entries: [String]) -> [UInt8] {
        Array(("<SignedDoc xmlns=\"http://www.sk.ee/DigiDoc/v1.3.0#\" format=\"DIGIDOC-XML\" version=\"1.3\">"
            + entries.joined() + "</SignedDoc>").utf8)
    }

    private func assertFails(_ file: String, with key: CDOCTestKey, _ code: CDOCError.Code, line: UInt = #line) {
        let sink = MemorySink()
        XCTAssertThrowsError(try reader(file).decrypt(with: .key(try recipientKey(key)), into: sink), line: line) { error in
            XCTAssertEqual((error as? CDOCError)?.code, code, "\(error)", line: line)
            XCTAssertFalse("\(error)".contains("\n"), "one line: \(error)", line: line)
        }
        XCTAssertTrue(sink.files.isEmpty, line: line)
    }

    func testEntityExpansionIsRefusedBeforeAnythingIsRead() throws {
        let bomb = """
        <?xml version="1.0"?>
        <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
        <denc:EncryptedData xmlns:denc="http://www.w3.org/2001/04/xmlenc#">&lol2;</denc:EncryptedData>
        """
        let file = try write("bomb.cdoc", Array(bomb.utf8))
        XCTAssertThrowsError(try reader(file)) { error in
            XCTAssertEqual((error as? CDOCError)?.code, .malformed)
            XCTAssertTrue("\(error)".contains("DTD or entities"), "\(error)")
        }
    }

    func testATruncatedFileIsMalformed() throws {
        let recipient = try key(.rsa, "r")
        let whole = try read(try encrypt([("a.txt", randomBytes(5000))], for: [recipient]))
        let file = try write("cut.cdoc", Array(whole.prefix(whole.count / 2)))
        XCTAssertThrowsError(try reader(file)) { XCTAssertEqual(($0 as? CDOCError)?.code, .malformed, "\($0)") }
    }

    func testATamperedGCMTagFailsAndHandsNothingOn() throws {
        let recipient = try key(.p384, "ec")
        let text = String(decoding: try read(try encrypt([("a.txt", randomBytes(100)), ("b.txt", randomBytes(10))], for: [recipient])), as: UTF8.self)
        let open = text.range(of: "<denc:CipherValue>", options: .backwards)!
        let close = text.range(of: "</denc:CipherValue>", options: .backwards)!
        var payload = [UInt8](Data(base64Encoded: String(text[open.upperBound..<close.lowerBound]), options: .ignoreUnknownCharacters)!)
        payload[payload.count - 1] ^= 0x01
        let file = try write("tampered.cdoc", Array((text[..<open.upperBound] + Data(payload).base64EncodedString() + text[close.lowerBound...]).utf8))
        assertFails(file, with: recipient, .tampered)
    }

    func testAKeyThatIsNoRecipientIsToldSo() throws {
        let file = try encrypt([("a.txt", [1])], for: [try key(.rsa, "meant")])
        assertFails(file, with: try key(.rsa, "other"), .noRecipient)
    }

    func testTheRecipientsCertificateWithAnotherKeyIsAWrongKey() throws {
        for kind in [CDOCTestKey.Kind.rsa, .p256] {
            let meant = try key(kind, "meant")
            let file = try encrypt([("a.txt", [1])], for: [meant])
            let other = try key(kind, "impostor")
            let impostor = SoftwareRecipientKey(name: "impostor", privateKey: try PrivateKey.read(try read(other.keyPath)),
                                                certificate: try certificate(meant))
            let sink = MemorySink()
            XCTAssertThrowsError(try reader(file).decrypt(with: .key(impostor), into: sink)) {
                // RSA: PKCS#1 v1.5 may "succeed" with a random key, which GCM then refuses.
                XCTAssertTrue([.wrongKey, .tampered].contains(($0 as? CDOCError)?.code), "\($0)")
            }
            XCTAssertTrue(sink.files.isEmpty)
        }
    }

    func testADDOCEntryWithoutANameFailsAndWritesNothing() throws {
        let recipient = try key(.rsa, "r")
        let payload = ddoc(["<DataFile ContentType=\"EMBEDDED_BASE64\" Filename=\"first.txt\" Id=\"D0\">Zmlyc3Q=</DataFile>",
                            "<DataFile ContentType=\"EMBEDDED_BASE64\" Id=\"D1\">c2Vjb25k</DataFile>"])
        let ec = try key(.p256, "ec")
        let file = try handMade(payload: payload, mimeType: "http://www.sk.ee/DigiDoc/v1.3.0/digidoc.xsd", for: recipient)
        assertFails(file, with: recipient, .malformed)
    }

    func testUnsafeOrRepeatedNamesInADDOCAreRefused() throws {
        let recipient = try key(.rsa, "r")
        for names in [["../escape"], ["a/b"], ["ok.txt", "ok.txt"], ["-rf"], ["bad\u{202E}txt.exe"]] {
            let payload = ddoc(names.enumerated().map {
                "<DataFile ContentType=\"EMBEDDED_BASE64\" Filename=\"\($0.element)\" Id=\"D\($0.offset)\">eA==</DataFile>"
            })
            let ec = try key(.p256, "ec")
        let file = try handMade(payload: payload, mimeType: "http://www.sk.ee/DigiDoc/v1.3.0/digidoc.xsd", for: recipient)
            assertFails(file, with: recipient, .unsafeName)
        }
        assertFails(try handMade(payload: [1], mimeType: "application/octet-stream", for: recipient, filename: ".."), with: recipient, .unsafeName)
    }

    /// libdigidoc's optional zlib layer: inflated, and a stream that inflates past the size the
    /// file declares is refused as a bomb.
    func testAZlibPayloadInflatesAndABombIsRefused() throws {
        let recipient = try key(.p256, "r")
        let original = Array(String(repeating: "Õunad ja pirnid. ", count: 4000).utf8)
        try Data(original).write(to: folder.appendingPathComponent("plain"))
        let compressed = try Shell.run("/usr/bin/python3", ["-c", "import sys, zlib; open(sys.argv[2], 'wb').write(zlib.compress(open(sys.argv[1], 'rb').read()))",
                                                            path("plain"), path("plain.z")])
        XCTAssertEqual(compressed.status, 0, compressed.stderr)
        let zlibType = "http://www.isi.edu/in-noes/iana/assignments/media-types/application/zip"
        let ec = try key(.p256, "ec")
        let file = try handMade(payload: try read(path("plain.z")), mimeType: zlibType, for: recipient, filename: "apples.txt",
                                extra: [("OriginalSize", "\(original.count)"), ("OriginalMimeType", "text/plain")])
        XCTAssertEqual(try decrypt(file, with: recipient).files.map(\.bytes), [original])
        let bomb = try handMade(payload: try read(path("plain.z")), mimeType: zlibType, for: recipient, filename: "apples.txt",
                                extra: [("OriginalSize", "1000")])
        assertFails(bomb, with: recipient, .limit)
    }

    func testSomethingThatIsNotXMLIsNotAnEncryptedContainer() throws {
        let file = try write("zip.cdoc", Array("PK\u{03}\u{04}rest".utf8))
        XCTAssertThrowsError(try reader(file)) { XCTAssertEqual(($0 as? CDOCError)?.code, .notEncrypted) }
    }
}

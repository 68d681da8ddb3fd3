import CDOC
import Configuration
import Crypto
import Foundation
import TestTools
import XCTest
@testable import Signing

/// The decryption methods' parameters and the unlockers they make from files (no prompts here).
final class DecryptionMethodTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("decryption-method-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    private func file(_ name: String, _ text: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    private func unlocker(_ method: DecryptionMethod, _ arguments: [String]) throws -> Unlocker {
        try method.unlocker(try method.parse(arguments: arguments), configuration: Configuration(), commandLine: false)
    }

    func testASecretFileHoldsABase64Key() throws {
        let key = Array(0..<32) as [UInt8]
        guard case .symmetricKey(let secret, let label) = try unlocker(.secret, ["secret-file=\(try file("s", Data(key).base64EncodedString() + "\n"))", "label=mine"]) else {
            return XCTFail("not a symmetric key")
        }
        XCTAssertEqual(secret.withBytes { Array($0) }, key)
        XCTAssertEqual(label, "mine")
        guard case .symmetricKey(let prefixed, nil) = try unlocker(.secret, ["secret-file=\(try file("p", "base64," + Data(key).base64EncodedString()))"]) else {
            return XCTFail("not a symmetric key")
        }
        XCTAssertEqual(prefixed.withBytes { Array($0) }, key)
        XCTAssertThrowsError(try unlocker(.secret, ["secret-file=\(try file("bad", "not base64!"))"])) {
            XCTAssertEqual(($0 as? CDOCError)?.code, .malformed)
        }
    }

    func testAPasswordFileGivesItsFirstLine() throws {
        guard case .password(let password, nil) = try unlocker(.password, ["password-file=\(try file("pw", "correct horse\nignored"))"]) else {
            return XCTFail("not a password")
        }
        XCTAssertEqual(password.withBytes { String(decoding: $0, as: UTF8.self) }, "correct horse")
    }

    func testAnEncryptedPEMKeyOpensWithItsPassphraseFile() throws {
        let pem = folder.appendingPathComponent("enc.pem").path
        let made = try Shell.run("/usr/bin/openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-aes256",
                                                     "-pass", "pass:open sesame", "-out", pem])
        XCTAssertEqual(made.status, 0, made.stderr)
        guard case .key(let key) = try unlocker(.key, ["key-file=\(pem)", "passphrase-file=\(try file("pass", "open sesame"))"]) else {
            return XCTFail("not a key")
        }
        XCTAssertEqual(key.publicKey.curve, .p384)
        XCTAssertEqual(key.name, "enc.pem")
        XCTAssertThrowsError(try unlocker(.key, ["key-file=\(pem)", "passphrase-file=\(try file("wrong", "closed"))"])) {
            XCTAssertEqual(($0 as? CDOCError)?.code, .wrongKey)
        }
    }

    func testParametersAreCheckedBeforeAnythingIsRead() {
        XCTAssertThrowsError(try DecryptionMethod.key.parse(arguments: [])) { XCTAssertTrue("\($0)".contains("key-file=PATH")) }
        XCTAssertThrowsError(try DecryptionMethod.pkcs12.parse(arguments: ["passphrase-file=x"])) { XCTAssertTrue("\($0)".contains("file=PATH")) }
        XCTAssertThrowsError(try DecryptionMethod.key.parse(arguments: ["key-file=x", "role=boss"])) { XCTAssertTrue("\($0)".contains("'role'")) }
        XCTAssertThrowsError(try DecryptionMethod.password.parse(arguments: ["secret-file=x"])) { XCTAssertTrue("\($0)".contains("'secret-file'")) }
        // In a mount's daemon a descriptor is not ours: pinentry asks there.
        XCTAssertThrowsError(try unlocker(.password, ["password-fd=3"])) { XCTAssertTrue("\($0)".contains("command line"), "\($0)") }
    }

    /// The card and token methods reach their key holders (RecipientKeyTests decrypt with them):
    /// a module that does not exist is that holder's error, not "unsupported".
    func testTheTokenMethodReachesItsKeyHolder() {
        XCTAssertThrowsError(try unlocker(.pkcs11, ["module=/nonexistent/asicfs-no-module.so"])) {
            XCTAssertNil($0 as? CDOCError, "\($0)")
            XCTAssertTrue("\($0)".contains("/nonexistent/asicfs-no-module.so"), "\($0)")
        }
    }
}

import CDOC
import Crypto
import Foundation
import Signing
import TestTools
import XCTest

/// A PKCS#11 token as the recipient's key: SoftHSM with EC P-256, P-384 and RSA-2048 keys the
/// test makes and imports, each checked against OpenSSL with the same key file.
final class PKCS11RecipientKeyTests: XCTestCase {
    static let pin = "4321"
    nonisolated(unsafe) static var folder: String!
    nonisolated(unsafe) static var setUpFailure: String?

    override class func setUp() {
        folder = NSTemporaryDirectory() + "asicfs-keys-pkcs11-\(getpid())"
        do {
            let tokens = try SoftHSMTokens(folder: folder + "/softhsm")
            // SoftHSM reads its configuration when this process first loads it. Only that
            // variable: the tokens' PCSCLITE_CSOCK_NAME (no pcscd) stayed in this process's
            // environment, which Foundation keeps, and every later class's virtual readers then
            // could not reach their pcscd. Put back in tearDown.
            savedEnvironment = getenv("SOFTHSM2_CONF").map { String(cString: $0) }
            setenv("SOFTHSM2_CONF", tokens.environment["SOFTHSM2_CONF"]!, 1)
            var identities: [SoftHSMTokens.Identity] = []
            for (index, (name, algorithm, usage)) in [("ec256", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256", "keyAgreement"),
                                                      ("ec384", "-algorithm EC -pkeyopt ec_paramgen_curve:P-384", "keyAgreement"),
                                                      ("rsa", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048", "keyEncipherment"),
                                                      ("signing", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256", "nonRepudiation")].enumerated() {
                let key = folder + "/\(name).key", certificate = folder + "/\(name).pem"
                let made = try Shell.sh("set -e; openssl genpkey \(algorithm) -out '\(key)' 2>/dev/null; "
                    + "openssl req -new -x509 -key '\(key)' -out '\(certificate)' -days 30 -subj '/CN=asicfs test \(name)' "
                    + "-addext 'keyUsage=critical,\(usage)' 2>&1")
                guard made.status == 0 else { throw ShellError("openssl: \(made.stdout) \(made.stderr)") }
                identities.append(.init(key: key, certificate: certificate, id: String(format: "%02x", index + 1), label: name,
                                        derive: name.hasPrefix("ec")))
            }
            try tokens.makeToken(label: "decrypt", pin: pin, identities: identities)
        } catch {
            setUpFailure = "\(error)"
        }
    }

    nonisolated(unsafe) static var savedEnvironment: String?

    override class func tearDown() {
        if let savedEnvironment { setenv("SOFTHSM2_CONF", savedEnvironment, 1) } else { unsetenv("SOFTHSM2_CONF") }
        try? FileManager.default.removeItem(atPath: folder)
    }

    override func setUpWithError() throws {
        if let failure = Self.setUpFailure { throw ShellError("the SoftHSM token could not be made: \(failure)") }
    }

    func key(_ label: String?, pin: String = PKCS11RecipientKeyTests.pin) throws -> PKCS11RecipientKey {
        var values = ["module": SoftHSMTokens.module, "label": "decrypt",
                      "pin-fd": "\(try RecipientKeyTesting.pinDescriptor(pin, in: Self.folder))"]
        values["key"] = label
        return try PKCS11RecipientKey(parameters: SigningParameters(values), configuration: try RecipientKeyTesting.configuration())
    }

    func testECDHOnP256AndP384EqualsOpenSSLs() throws {
        for (label, curve) in [("ec256", EllipticCurve.p256), ("ec384", .p384)] {
            let key = try key(label)
            XCTAssertEqual(key.certificate?.der, try RecipientKeyTesting.certificateDER(Self.folder + "/\(label).pem"))
            XCTAssertEqual(key.publicKey.curve, curve)
            let sender = try RecipientKeyTesting.ephemeral(curve)
            let z = RecipientKeyTesting.bytes(try key.agree(with: sender.publicKey))
            XCTAssertEqual(z.count, curve == .p256 ? 32 : 48)
            XCTAssertEqual(z, RecipientKeyTesting.bytes(try RecipientKeyTesting.privateKey(Self.folder + "/\(label).key").agree(with: sender.publicKey)))
            XCTAssertEqual(z, RecipientKeyTesting.bytes(try sender.agree(with: key.publicKey)))
        }
    }

    func testRSAUnwrapsPKCS1RoundTripAndOAEPSHA256IsRefusedClearlyBySoftHSM() throws {
        // SoftHSM 2.6 does OAEP with SHA-1 only: CDOC2's OAEP-SHA-256 is refused in one sentence.
        let oaep = try key("rsa")
        XCTAssertThrowsError(try oaep.decrypt(try oaep.publicKey.encrypt(SecretBytes([1, 2, 3]), padding: .oaepSHA256), padding: .oaepSHA256)) { error in
            XCTAssertEqual("\(error)", "the token \"decrypt\" cannot decrypt RSA-OAEP with SHA-256, which CDOC2 RSA recipients need "
                + "(C_DecryptInit failed: CKR_ARGUMENTS_BAD (0x7))")
        }
        for padding in [RSAKeyPadding.pkcs1v15] {
            // A key asks its PIN at each operation; pin-fd gives one line, so one key each.
            let key = try key("rsa")
            let transportKey = SecretBytes((0..<32).map { _ in UInt8.random(in: 0...255) })
            let wrapped = try key.publicKey.encrypt(transportKey, padding: padding)
            XCTAssertEqual(wrapped.count, 256)
            XCTAssertEqual(RecipientKeyTesting.bytes(try key.decrypt(wrapped, padding: padding)), RecipientKeyTesting.bytes(transportKey))
        }
        // OAEP ciphertext handed over as PKCS#1 v1.5 is refused, not turned into a key.
        let key = try key("rsa")
        let wrapped = try key.publicKey.encrypt(SecretBytes([1, 2, 3]), padding: .oaepSHA256)
        XCTAssertThrowsError(try key.decrypt(wrapped, padding: .pkcs1v15)) { error in
            // SoftHSM answers CKR_GENERAL_ERROR here; other tokens CKR_ENCRYPTED_DATA_INVALID.
            XCTAssertTrue("\(error)".hasPrefix("the token \"decrypt\": C_Decrypt failed: CKR_"), "\(error)")
        }
    }

    func testChoosingTheKeyAndTheErrors() throws {
        // Three certificates can decrypt (the nonRepudiation one cannot): key= must choose.
        XCTAssertThrowsError(try key(nil)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("several certificates can decrypt: "), text)
            for name in ["ec256", "ec384", "rsa"] { XCTAssertTrue(text.contains("asicfs test \(name)"), text) }
            XCTAssertFalse(text.contains("asicfs test signing"), text)
            XCTAssertTrue(text.hasSuffix("; choose one with label=, slot= or key="), text)
        }
        XCTAssertThrowsError(try key("signing")) { error in
            XCTAssertEqual("\(error)", "no certificate for decrypting on token \"decrypt\": none has the key agreement or key "
                + "encipherment key usage (asicfs test signing)")
        }
        XCTAssertThrowsError(try key("ec384", pin: "0000").agree(with: try RecipientKeyTesting.ephemeral(.p384).publicKey)) { error in
            // SoftHSM raises "count low" at the first wrong PIN.
            XCTAssertEqual("\(error)", "wrong PIN for the token \"decrypt\"; few tries are left (nothing was decrypted)")
        }
        XCTAssertThrowsError(try key("ec384").agree(with: try RecipientKeyTesting.ephemeral(.p256).publicKey)) { error in
            XCTAssertEqual("\(error)", "the sender's key is not on the curve of the key on the token \"decrypt\"")
        }
    }
}

import Crypto
import PKCS11
@testable import Signing
import XCTest

/// The one-line errors of the pkcs11 method for what SoftHSM cannot show (it never locks a PIN
/// and has no PIN pad), and the mechanisms chosen per algorithm.
final class PKCS11FailureTests: XCTestCase {
    func message(_ code: UInt, _ flags: TokenFlags = []) -> String {
        PKCS11Failure.describe(PKCS11Error(code: code, "C_Login failed: \(PKCS11Error.name(of: code))"), token: "Rutoken", flags: flags).description
    }

    func testPINErrorsNameTheTokenAndTheTriesLeft() {
        XCTAssertEqual(message(PKCS11Error.pinIncorrect), "wrong PIN for the token \"Rutoken\" (nothing was signed)")
        XCTAssertEqual(message(PKCS11Error.pinIncorrect, [.userPINFinalTry, .userPINCountLow]),
                       "wrong PIN for the token \"Rutoken\"; final try: one more wrong PIN locks it (nothing was signed)")
        XCTAssertEqual(message(PKCS11Error.pinIncorrect, [.userPINLocked]),
                       "wrong PIN for the token \"Rutoken\"; the PIN is now locked (nothing was signed)")
        XCTAssertEqual(message(PKCS11Error.pinLocked),
                       "the PIN of the token \"Rutoken\" is locked (too many wrong PINs): unblock it with its PUK or SO PIN")
    }

    func testARemovedTokenIsOneLine() {
        for code in [PKCS11Error.tokenNotPresent, PKCS11Error.deviceRemoved, PKCS11Error.sessionHandleInvalid] {
            XCTAssertEqual(message(code), "the token \"Rutoken\" was removed (nothing was signed)")
        }
        XCTAssertEqual(message(0x30), "the token \"Rutoken\": C_Login failed: CKR_DEVICE_ERROR (0x30)")
    }

    func testMechanismsPerAlgorithm() throws {
        let digest = [UInt8](repeating: 7, count: 32)
        let ec = try PKCS11Signer.mechanism(SignatureAlgorithm(.ecdsa, .sha384), digest: digest)
        XCTAssertEqual(ec.0, .ecdsa)
        XCTAssertEqual(ec.1, digest)
        let rsa = try PKCS11Signer.mechanism(SignatureAlgorithm(.rsaPKCS1, .sha256), digest: digest)
        XCTAssertEqual(rsa.0, .rsaPKCS)
        XCTAssertEqual(rsa.1, DigestAlgorithm.sha256.digestInfoPrefix! + digest)
        let pss = try PKCS11Signer.mechanism(SignatureAlgorithm(.rsaPSS, .sha256), digest: digest)
        XCTAssertEqual(pss.0, .rsaPSS(.sha256))
    }

    func testParametersAreCheckedBeforeAnyModuleLoads() {
        XCTAssertThrowsError(try SigningMethod.pkcs11.parse("slot=first")) { XCTAssertTrue("\($0)".contains("slot= takes a slot id"), "\($0)") }
        XCTAssertThrowsError(try SigningMethod.pkcs11.parse("pin-fd=-1")) { XCTAssertTrue("\($0)".contains("pin-fd= takes a descriptor"), "\($0)") }
        XCTAssertThrowsError(try SigningMethod.pkcs11.parse("module=")) { XCTAssertTrue("\($0)".contains("module= needs a value"), "\($0)") }
        XCTAssertThrowsError(try SigningMethod.pkcs11.parse("pin=1234")) { XCTAssertTrue("\($0)".contains("unknown parameter 'pin'"), "\($0)") }
        XCTAssertNoThrow(try SigningMethod.pkcs11.parse("module=/usr/lib/softhsm/libsofthsm2.so label=\"my token\" slot=3 key=01 pin-fd=3"))
        XCTAssertFalse(SigningMethod.pkcs11.usage.contains("not available"))
    }
}

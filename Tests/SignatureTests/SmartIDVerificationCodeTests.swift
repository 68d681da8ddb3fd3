import Crypto
import Signing
import XCTest

/// The verification code against the vectors of the protocol notes (§10): SK's Java client tests,
/// the v3 documentation, and two recomputed here.
final class SmartIDVerificationCodeTests: XCTestCase {
    func testTheSpecVectors() {
        XCTAssertEqual(SmartIDVerificationCode.code(for: [0x1b, 0xbb]), "4555")
        XCTAssertEqual(code(sha256: "Hello World!"), "7712")
        XCTAssertEqual(code(sha256: "Hedgehogs \u{2013} why can't they just share the hedge?"), "4612")
        XCTAssertEqual(code(sha256: "Go ahead, make my day."), "7782")
        XCTAssertEqual(code(sha256: "You're gonna need a bigger boat."), "1464")
        XCTAssertEqual(code(sha256: "Say 'hello' to my little friend!"), "4240")
        // SHA-256 is applied whatever hash is signed.
        XCTAssertEqual(SmartIDVerificationCode.code(for: Digest.hash(Array("Hello World!".utf8), .sha512)), "4664")
    }

    func testTheDigestsOfTheVectorsAreTheOnesNamed() {
        XCTAssertTrue(Digest.hash(Array("Hello World!".utf8)).hexString.hasPrefix("7f83b165"))
        XCTAssertTrue(Digest.hash(Array("Hedgehogs \u{2013} why can't they just share the hedge?".utf8)).hexString.hasPrefix("c619063e"))
        XCTAssertTrue(Digest.hash(Array("Hello World!".utf8), .sha512).hexString.hasPrefix("861844d6"))
    }

    /// Codes below 1000 keep their leading zeros (vector computed with python3 hashlib).
    func testLeadingZerosAreKept() {
        XCTAssertEqual(code(sha256: "asicfs 340"), "0003")
    }

    private func code(sha256 text: String) -> String {
        SmartIDVerificationCode.code(for: Digest.hash(Array(text.utf8), .sha256))
    }
}

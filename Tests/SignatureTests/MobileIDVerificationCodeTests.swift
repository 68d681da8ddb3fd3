import Crypto
import Foundation
import Signing
import XCTest

/// The verification code vectors of spec/mobile-id.md §9 (from the MID spec and the Java client's tests).
final class MobileIDVerificationCodeTests: XCTestCase {
    func code(_ hash: [UInt8]) -> String? { MobileIDVerificationCode.compute(hash) }

    func testSpecExampleHash() {
        XCTAssertEqual(code(hex("2f665f6a6999e0ef0752e00ec9f453adf59d8cb6")), "1462")
    }

    func testJavaClientVectors() {
        XCTAssertEqual(code(Digest.hash(Array("HACKERMAN_SHA256".utf8), .sha256)), "6008")
        XCTAssertEqual(code(Digest.hash(Array("HACKERMAN_SHA384".utf8), .sha384)), "7230")
        XCTAssertEqual(code(Digest.hash(Array("HACKERMAN_SHA512".utf8), .sha512)), "3843")
        let hackerman = Digest.hash(Array("HACKERMAN".utf8), .sha256)
        XCTAssertEqual(Data(hackerman).base64EncodedString(), "AE7S1QxYjqtVv+Tgukv2bMMi9gDCbc9ca2vy/iIG6ug=")
        XCTAssertEqual(code(hackerman), "0104", "leading zeros are kept")
    }

    func testSpecRequestExampleHash() {
        let hash = Array(Data(base64Encoded: "0nbgC2fVdLVQFZJdBbmG7oPoElpCYsQMtrY0c0wKYRg=")!)
        XCTAssertEqual(code(hash), "6680")
    }

    func testExtremes() {
        XCTAssertEqual(code([UInt8](repeating: 0, count: 32)), "0000")
        XCTAssertEqual(code([UInt8](repeating: 0xFF, count: 32)), "8191")
    }

    func testHashesShorterThan20BytesAreRefused() {
        XCTAssertNil(code([UInt8](repeating: 0xAB, count: 19)))
        XCTAssertNil(code([]))
        XCTAssertEqual(code([UInt8](repeating: 0, count: 20)), "0000")
    }

    func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}

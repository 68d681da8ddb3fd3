import Crypto
import XCTest

/// Known answers from the standards themselves: FIPS-197 appendix C (AES block), NIST SP 800-38A
/// F.2.1 (CBC-AES128) and RFC 4493 §4 / NIST SP 800-38B D.1 and D.3 (AES-CMAC).
final class AESAndCMACTests: XCTestCase {
    func testAESBlockMatchesFIPS197() throws {
        let plain = hex("00112233445566778899aabbccddeeff")
        XCTAssertEqual(try AES.encryptBlock(key: secret("000102030405060708090a0b0c0d0e0f"), plain), hex("69c4e0d86a7b0430d8cdb78070b4c55a"))
        let key256 = secret("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        XCTAssertEqual(try AES.encryptBlock(key: key256, plain), hex("8ea2b7ca516745bfeafc49904b496089"))
    }

    func testCBCMatchesSP800_38AAndRoundTrips() throws {
        let key = secret("2b7e151628aed2a6abf7158809cf4f3c")
        let iv = hex("000102030405060708090a0b0c0d0e0f")
        let plain = hex("6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51")
        let cipher = try AES.encryptCBC(key: key, iv: iv, plain)
        XCTAssertEqual(cipher, hex("7649abac8119b246cee98e9b12e9197d 5086cb9b507219ee95db113a917678b2"))
        XCTAssertEqual(try AES.decryptCBC(key: key, iv: iv, cipher), plain)
    }

    func testAESRefusesPartialBlocksAndOddKeys() {
        XCTAssertThrowsError(try AES.encryptCBC(key: secret("2b7e151628aed2a6abf7158809cf4f3c"), [1, 2, 3]))
        XCTAssertThrowsError(try AES.encryptCBC(key: SecretBytes([1, 2, 3]), AES.zeroBlock))
        XCTAssertThrowsError(try AES.encryptBlock(key: secret("2b7e151628aed2a6abf7158809cf4f3c"), []))
    }

    func testCMACMatchesRFC4493() throws {
        let key = secret("2b7e151628aed2a6abf7158809cf4f3c")
        XCTAssertEqual(try CMAC.aes(key: key, []), hex("bb1d6929e95937287fa37d129b756746"))
        XCTAssertEqual(try CMAC.aes(key: key, hex("6bc1bee22e409f96e93d7e117393172a")), hex("070a16b46b4d4144f79bdd9dd04a287c"))
        let forty = hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411")
        XCTAssertEqual(try CMAC.aes(key: key, forty), hex("dfa66747de9ae63030ca32611497c827"))
    }

    func testCMACWithAES256MatchesSP800_38B() throws {
        let key = secret("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")
        XCTAssertEqual(try CMAC.aes(key: key, []), hex("028962f61b7bf89efc6b551f4667d983"))
        XCTAssertEqual(try CMAC.aes(key: key, hex("6bc1bee22e409f96e93d7e117393172a")), hex("28a7023f452e8f82bd4bf28d8c37c35c"))
    }
}

func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0 ... $0 + 1]), radix: 16)! }
}

func secret(_ text: String) -> SecretBytes { SecretBytes(hex(text)) }

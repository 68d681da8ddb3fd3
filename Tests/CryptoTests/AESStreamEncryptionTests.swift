import Crypto
import XCTest

/// AES encryption in pieces gives what the whole-buffer calls give: AES-GCM's ciphertext and
/// tag, AES-CBC with its PKCS#7 block; and it decrypts with AESStreamDecryption.
final class AESStreamEncryptionTests: XCTestCase {
    private func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    private func inPieces(_ mode: AESStreamEncryption.Mode, key: SecretBytes, iv: [UInt8], _ data: [UInt8],
                          cut: Int) throws -> (ciphertext: [UInt8], tag: [UInt8]?) {
        let cipher = try AESStreamEncryption(mode, key: key, iv: iv)
        var out: [UInt8] = []
        var offset = 0
        while offset < data.count {
            let end = min(offset + cut, data.count)
            try Array(data[offset..<end]).withUnsafeBytes { try cipher.update($0) { out += $0 } }
            offset = end
        }
        let tag = try cipher.finish { out += $0 }
        return (out, tag)
    }

    func testPiecesGiveTheWholeBufferCiphertext() throws {
        for keyLength in [16, 24, 32] {
            let key = SecretBytes(random(keyLength))
            for length in [0, 1, 15, 16, 17, 100, 70_000, 200_003] {
                let data = random(length)
                for cut in [1, 7, 16, 65_536, 1 << 20] where cut <= max(length, 1) * 2 {
                    let gcmIV = random(AESGCM.ivLength)
                    let sealed = try AESGCM.seal(key: key, iv: gcmIV, data)
                    let gcm = try inPieces(.gcm, key: key, iv: gcmIV, data, cut: cut)
                    XCTAssertEqual(gcm.ciphertext, sealed.ciphertext, "GCM \(keyLength) \(length) \(cut)")
                    XCTAssertEqual(gcm.tag, sealed.tag, "GCM tag \(keyLength) \(length) \(cut)")

                    let cbcIV = random(AES.blockSize)
                    let cbc = try inPieces(.cbcPadded, key: key, iv: cbcIV, data, cut: cut)
                    XCTAssertEqual(cbc.ciphertext, try AESCBCPadded.encrypt(key: key, iv: cbcIV, data), "CBC \(keyLength) \(length) \(cut)")
                    XCTAssertNil(cbc.tag)

                    let decryption = try AESStreamDecryption(.gcm, key: key, iv: gcmIV)
                    var plain: [UInt8] = []
                    try gcm.ciphertext.withUnsafeBytes { try decryption.update($0) { plain += $0 } }
                    try decryption.finish(tag: gcm.tag) { plain += $0 }
                    XCTAssertEqual(plain, data)
                }
            }
        }
    }

    func testAWrongKeyOrIVLengthIsRefused() {
        XCTAssertThrowsError(try AESStreamEncryption(.gcm, key: SecretBytes(random(20)), iv: random(12)))
        XCTAssertThrowsError(try AESStreamEncryption(.gcm, key: SecretBytes(random(32)), iv: random(16)))
        XCTAssertThrowsError(try AESStreamEncryption(.cbcPadded, key: SecretBytes(random(16)), iv: random(12)))
    }
}

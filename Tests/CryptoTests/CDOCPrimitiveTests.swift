import Foundation
import TestTools
import XCTest
@testable import Crypto

/// The primitives of encrypted containers against an independent implementation (Python's
/// `cryptography`) on the same random inputs: AES-GCM, AES-CBC with PKCS#7, RFC 3394 key wrap
/// and the ConcatKDF (SP 800-56A single-step) of XML-ENC 1.1.
final class CDOCPrimitiveTests: XCTestCase {
    private func python(_ code: String, _ arguments: [String]) throws -> [UInt8] {
        let result = try Shell.run("/usr/bin/python3", ["-c", code] + arguments)
        XCTAssertEqual(result.status, 0, result.stderr)
        return Array(Data(hex: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    private func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    private func plain(_ secret: SecretBytes) -> [UInt8] { secret.withBytes { Array($0) } }

    func testAESGCMMatchesPythonAndRefusesAChangedTag() throws {
        for keyLength in [16, 32] {
            let key = random(keyLength), iv = random(12), data = random(1000)
            let sealed = try AESGCM.seal(key: SecretBytes(key), iv: iv, data)
            let expected = try python("""
                import sys; from cryptography.hazmat.primitives.ciphers.aead import AESGCM
                print(AESGCM(bytes.fromhex(sys.argv[1])).encrypt(bytes.fromhex(sys.argv[2]), bytes.fromhex(sys.argv[3]), None).hex())
                """, [hex(key), hex(iv), hex(data)])
            XCTAssertEqual(sealed.ciphertext + sealed.tag, expected)
            XCTAssertEqual(try AESGCM.open(key: SecretBytes(key), iv: iv, sealed.ciphertext[...], tag: sealed.tag), data)
            var tag = sealed.tag
            tag[0] ^= 1
            XCTAssertThrowsError(try AESGCM.open(key: SecretBytes(key), iv: iv, sealed.ciphertext[...], tag: tag))
        }
    }

    func testAESCBCWithPaddingMatchesPython() throws {
        for size in [0, 15, 16, 33] {
            let key = random(16), iv = random(16), data = random(size)
            let encrypted = try AESCBCPadded.encrypt(key: SecretBytes(key), iv: iv, data)
            let expected = try python("""
                import sys; from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
                from cryptography.hazmat.primitives import padding
                p = padding.PKCS7(128).padder(); data = p.update(bytes.fromhex(sys.argv[3])) + p.finalize()
                e = Cipher(algorithms.AES(bytes.fromhex(sys.argv[1])), modes.CBC(bytes.fromhex(sys.argv[2]))).encryptor()
                print((e.update(data) + e.finalize()).hex())
                """, [hex(key), hex(iv), hex(data)])
            XCTAssertEqual(encrypted, expected, "size \(size)")
            XCTAssertEqual(try AESCBCPadded.decrypt(key: SecretBytes(key), iv: iv, encrypted[...]), data)
        }
    }

    func testAESKeyWrapMatchesPythonAndRefusesAWrongKEK() throws {
        for kekLength in [16, 32] {
            let kek = random(kekLength), key = random(32)
            let wrapped = try AESKeyWrap.wrap(kek: SecretBytes(kek), SecretBytes(key))
            let expected = try python("""
                import sys; from cryptography.hazmat.primitives.keywrap import aes_key_wrap
                print(aes_key_wrap(bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2])).hex())
                """, [hex(kek), hex(key)])
            XCTAssertEqual(wrapped, expected)
            XCTAssertEqual(wrapped.count, 40)
            XCTAssertEqual(plain(try AESKeyWrap.unwrap(kek: SecretBytes(kek), wrapped)), key)
            XCTAssertThrowsError(try AESKeyWrap.unwrap(kek: SecretBytes(random(kekLength)), wrapped))
        }
    }

    func testConcatKDFMatchesPythonForEveryDigest() throws {
        for (digest, name) in [(DigestAlgorithm.sha256, "SHA256"), (.sha384, "SHA384"), (.sha512, "SHA512")] {
            let z = random(48), info = random(200)
            for length in [32, 80] {
                let derived = try ConcatKDF.derive(secret: SecretBytes(z), otherInfo: info, digest: digest, length: length)
                let expected = try python("""
                    import sys; from cryptography.hazmat.primitives import hashes
                    from cryptography.hazmat.primitives.kdf.concatkdf import ConcatKDFHash
                    print(ConcatKDFHash(getattr(hashes, sys.argv[1])(), int(sys.argv[4]), bytes.fromhex(sys.argv[3])).derive(bytes.fromhex(sys.argv[2])).hex())
                    """, [name, hex(z), hex(info), String(length)])
                XCTAssertEqual(plain(derived), expected, "\(name) \(length)")
            }
        }
    }
}

private extension Data {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), index < hex.endIndex {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        self.init(bytes)
    }
}

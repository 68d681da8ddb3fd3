import Crypto
import TestTools
import XCTest

/// HKDF, HMAC, PBKDF2 and ChaCha20-Poly1305 (CDOC2's primitives) against Python's
/// `cryptography`/hashlib computing the same values from random inputs in the test.
final class KDFAndAEADTests: XCTestCase {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    private func bytes(_ secret: SecretBytes) -> [UInt8] { secret.withBytes { Array($0) } }
    private func random(_ count: Int) -> [UInt8] { (0 ..< count).map { _ in UInt8.random(in: 0 ... 255) } }

    private func python(_ code: String, _ args: [String]) throws -> String {
        let out = try Shell.python(code, args)
        XCTAssertEqual(out.status, 0, out.stderr)
        return out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testHKDFAndHMACMatchAnIndependentImplementation() throws {
        let salt = random(32), ikm = random(48), info = random(20)
        let prk = try HKDF.extract(salt: salt, ikm: SecretBytes(ikm))
        let okm = try HKDF.expand(prk: prk, info: info, length: 42)
        let mac = try HMAC.sha256(key: SecretBytes(ikm), info)
        let expected = try python("""
            import sys, hmac, hashlib
            from cryptography.hazmat.primitives import hashes
            from cryptography.hazmat.primitives.kdf.hkdf import HKDF
            salt, ikm, info = (bytes.fromhex(a) for a in sys.argv[1:4])
            prk = hmac.new(salt, ikm, hashlib.sha256).digest()
            okm = HKDF(hashes.SHA256(), 42, salt, info).derive(ikm)
            print(prk.hex(), okm.hex(), hmac.new(ikm, info, hashlib.sha256).hexdigest())
            """, [hex(salt), hex(ikm), hex(info)])
        XCTAssertEqual(expected, "\(hex(bytes(prk))) \(hex(bytes(okm))) \(hex(mac))")
    }

    func testPBKDF2MatchesHashlib() throws {
        let salt = random(32)
        let derived = try PBKDF2.sha256(password: SecretBytes(Array("pässword".utf8)), salt: salt, iterations: 1234, length: 32)
        let expected = try python("""
            import sys, hashlib
            print(hashlib.pbkdf2_hmac("sha256", "pässword".encode(), bytes.fromhex(sys.argv[1]), 1234, 32).hex())
            """, [hex(salt)])
        XCTAssertEqual(hex(bytes(derived)), expected)
        XCTAssertThrowsError(try PBKDF2.sha256(password: SecretBytes([1]), salt: salt, iterations: 0, length: 32))
    }

    func testChaCha20Poly1305StreamsInAnyChunksAndChecksItsTag() throws {
        let key = random(32), nonce = random(12), aad = random(77), plain = random(100_003)
        let encryptor = try ChaCha20Poly1305(key: SecretBytes(key), nonce: nonce, encrypting: true)
        try encryptor.authenticate(aad)
        var sealed: [UInt8] = []
        var offset = 0
        for size in [1, 15, 64, 4096, 100_003] where offset < plain.count {
            let chunk = Array(plain[offset ..< min(plain.count, offset + size)])
            var out = [UInt8](repeating: 0, count: chunk.count)
            let n = try chunk.withUnsafeBytes { input in try out.withUnsafeMutableBytes { try encryptor.update(input, into: $0) } }
            sealed += out[..<n]
            offset += chunk.count
        }
        sealed += try encryptor.finishEncrypting()
        let expected = try python("""
            import sys
            from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
            key, nonce, aad, sealed = (bytes.fromhex(a) for a in open(sys.argv[1]).read().split())
            print(ChaCha20Poly1305(key).decrypt(nonce, sealed, aad).hex())
            """, [try writeTemporary([key, nonce, aad, sealed].map(hex).joined(separator: " "))])
        XCTAssertEqual(expected, hex(plain))

        for (damagedAt, damagedAAD) in [(5, false), (sealed.count - 1, false), (0, true)] {
            var body = Array(sealed.dropLast(16))
            var tag = Array(sealed.suffix(16))
            if !damagedAAD { if damagedAt >= body.count { tag[15] ^= 1 } else { body[damagedAt] ^= 1 } }
            let decryptor = try ChaCha20Poly1305(key: SecretBytes(key), nonce: nonce, encrypting: false)
            try decryptor.authenticate(damagedAAD ? aad + [0] : aad)
            var out = [UInt8](repeating: 0, count: body.count)
            _ = try body.withUnsafeBytes { input in try out.withUnsafeMutableBytes { try decryptor.update(input, into: $0) } }
            XCTAssertFalse(try decryptor.finishDecrypting(tag: tag))
        }
        let good = try ChaCha20Poly1305(key: SecretBytes(key), nonce: nonce, encrypting: false)
        try good.authenticate(aad)
        var out = [UInt8](repeating: 0, count: plain.count)
        let body = Array(sealed.dropLast(16))
        _ = try body.withUnsafeBytes { input in try out.withUnsafeMutableBytes { try good.update(input, into: $0) } }
        XCTAssertTrue(try good.finishDecrypting(tag: Array(sealed.suffix(16))))
        XCTAssertEqual(out, plain)
    }

    private func writeTemporary(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "/chacha-\(UInt32.random(in: 0 ... .max)).txt"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }
}

import Crypto
import Foundation
import TestTools
import XCTest

/// The spool cipher of encrypted mounts: AES-256-CTR whose key stream at any offset is the one
/// `openssl enc -aes-256-ctr` gives for the counter block nonce ‖ 0 (an independent reader), and
/// which encrypts and decrypts any byte range on its own.
final class CounterModeCipherTests: XCTestCase {
    func testAnyRangeMatchesOpenSSLEncOfTheWholeStream() throws {
        let key = try SecureRandom.bytes(32), nonce = try SecureRandom.bytes(8)
        let plain = try SecureRandom.bytes(100_003)
        let folder = NSTemporaryDirectory() + "asicfs-ctr-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(plain).write(to: URL(fileURLWithPath: folder + "/plain"))
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        let made = try Shell.run("/usr/bin/openssl", ["enc", "-aes-256-ctr", "-K", hex(key), "-iv", hex(nonce + [UInt8](repeating: 0, count: 8)),
                                                      "-in", folder + "/plain", "-out", folder + "/sealed"])
        XCTAssertEqual(made.status, 0, made.stderr)
        let expected = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/sealed")))
        XCTAssertEqual(expected.count, plain.count)

        let cipher = try CounterModeCipher(key: SecretBytes(key))
        // Ranges that start and end inside blocks, across blocks, a single byte, the end.
        for (start, count) in [(0, plain.count), (0, 1), (5, 11), (15, 2), (16, 16), (17, 40_000), (99_990, 13), (65_536, 1)] {
            var bytes = Array(plain[start..<start + count])
            try bytes.withUnsafeMutableBytes { try cipher.apply($0, nonce: nonce, at: Int64(start)) }
            XCTAssertEqual(bytes, Array(expected[start..<start + count]), "range \(start)+\(count)")
            try bytes.withUnsafeMutableBytes { try cipher.apply($0, nonce: nonce, at: Int64(start)) }
            XCTAssertEqual(bytes, Array(plain[start..<start + count]), "decrypting range \(start)+\(count)")
        }
        // Another nonce is another key stream.
        var other = Array(plain[0..<64])
        try other.withUnsafeMutableBytes { try cipher.apply($0, nonce: [UInt8](repeating: 1, count: 8), at: 0) }
        XCTAssertNotEqual(other, Array(expected[0..<64]))
    }

    func testRefusesAWrongKeyOrNonceSize() throws {
        XCTAssertThrowsError(try CounterModeCipher(key: SecretBytes([UInt8](repeating: 0, count: 16))))
        let cipher = try CounterModeCipher(key: SecretBytes([UInt8](repeating: 7, count: 32)))
        var bytes = [UInt8](repeating: 0, count: 4)
        XCTAssertThrowsError(try bytes.withUnsafeMutableBytes { try cipher.apply($0, nonce: [1, 2, 3], at: 0) })
        XCTAssertThrowsError(try bytes.withUnsafeMutableBytes { try cipher.apply($0, nonce: [UInt8](repeating: 0, count: 8), at: -1) })
    }
}

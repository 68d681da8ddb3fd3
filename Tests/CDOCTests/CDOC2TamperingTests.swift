import Crypto
import Foundation
import XCTest
@testable import CDOC

/// Damaged and hostile CDOC2 files: only CDOCErrors, nothing left in the sink.
final class CDOC2TamperingTests: XCTestCase {
    let key = randomBytes(32)
    let files: [(String, [UInt8])] = [("a.txt", Array("secret text\n".utf8)), ("b.bin", randomBytes(50_000))]

    private func container(_ scratch: CDOC2Scratch) throws -> (bytes: [UInt8], reader: CDOC2Reader) {
        try scratch.write("good.cdoc2", files: files, for: [.symmetricKey(SecretBytes(key), label: "s")])
        let (reader, descriptor) = try scratch.open("good.cdoc2")
        close(descriptor)
        return (try scratch.read("good.cdoc2"), reader)
    }

    func testATamperedHeaderFailsItsMAC() throws {
        let scratch = try CDOC2Scratch()
        let (bytes, reader) = try container(scratch)
        // The encrypted FMK and the MAC itself: both leave a parseable header and must fail the MAC.
        let fmkAt = bytes.firstRange(of: reader.header.records[0].encryptedFMK)!.lowerBound
        for position in [fmkAt, 9 + reader.headerBytes.count + 5] {
            var damaged = bytes
            damaged[position] ^= 0x01
            try scratch.write("bad.cdoc2", bytes: damaged)
            try scratch.expectFailure("bad.cdoc2", .symmetricKey(SecretBytes(key), label: nil), .wrongKey)
        }
    }

    func testATamperedLabelOrSaltFailsAsAWrongKey() throws {
        let scratch = try CDOC2Scratch()
        let (bytes, reader) = try container(scratch)
        guard case .symmetricKey(let salt) = reader.header.records[0].capsule else { return XCTFail() }
        var damaged = bytes
        damaged[bytes.firstRange(of: salt)!.lowerBound + 3] ^= 0x80
        try scratch.write("bad.cdoc2", bytes: damaged)
        try scratch.expectFailure("bad.cdoc2", .symmetricKey(SecretBytes(key), label: nil), .wrongKey)
    }

    func testATamperedPayloadFailsItsTagAndLeavesNothing() throws {
        let scratch = try CDOC2Scratch()
        let (bytes, reader) = try container(scratch)
        for position in [Int(reader.payloadOffset) + 3, Int(reader.payloadOffset) + 40, bytes.count - 200, bytes.count - 1] {
            var damaged = bytes
            damaged[position] ^= 0x04
            try scratch.write("bad.cdoc2", bytes: damaged)
            try scratch.expectFailure("bad.cdoc2", .symmetricKey(SecretBytes(key), label: nil), .tampered)
        }
    }

    func testTruncatedFilesFail() throws {
        let scratch = try CDOC2Scratch()
        let (bytes, reader) = try container(scratch)
        for length in [bytes.count - 1, bytes.count - 17, Int(reader.payloadOffset) + 40] {
            try scratch.write("cut.cdoc2", bytes: Array(bytes.prefix(length)))
            try scratch.expectFailure("cut.cdoc2", .symmetricKey(SecretBytes(key), label: nil), .tampered)
        }
        for length in [5, 9, 60, 9 + reader.headerBytes.count + 10, Int(reader.payloadOffset) + 20] {
            try scratch.write("cut.cdoc2", bytes: Array(bytes.prefix(length)))
            XCTAssertThrowsError(try scratch.open("cut.cdoc2"), "\(length)") { XCTAssertEqual(($0 as? CDOCError)?.code, .malformed) }
        }
    }

    func testAHeaderLengthPastTheLimitIsRefused() throws {
        let scratch = try CDOC2Scratch()
        try scratch.write("huge.cdoc2", bytes: CDOC2Reader.magic + [0x00, 0x10, 0x00, 0x01] + [UInt8](repeating: 0, count: 100))
        XCTAssertThrowsError(try scratch.open("huge.cdoc2")) { XCTAssertEqual(($0 as? CDOCError)?.code, .malformed) }
    }

    func testAHostileIterationCountIsRefused() throws {
        let scratch = try CDOC2Scratch()
        try scratch.pythonEncrypt("slow.cdoc2", files: files, ["--password", "pw", "p", "--iterations", "1000", "--header-iterations", "2000000000"])
        try scratch.expectFailure("slow.cdoc2", .password(secret("pw"), label: nil), .limit)
    }

    /// Thousands of mutated headers: each parses or fails with a CDOCError, never crashes or hangs.
    func testMutatedHeadersOnlyEverThrowCDOCErrors() throws {
        let scratch = try CDOC2Scratch()
        let ec = try scratch.makeKey("ec:P-384", named: "ec"), rsa = try scratch.makeKey("rsa", named: "rsa")
        try scratch.write("all.cdoc2", files: files, for: [
            .publicKey(try scratch.publicKey(ec.publicPath), label: "ec"), .publicKey(try scratch.publicKey(rsa.publicPath), label: "rsa"),
            .symmetricKey(SecretBytes(key), label: "s"), .password(secret("pw"), label: "p"),
        ])
        let (reader, descriptor) = try scratch.open("all.cdoc2")
        close(descriptor)
        let header = reader.headerBytes
        var generator = SystemRandomNumberGenerator()
        var parsed = 0, refused = 0
        for round in 0 ..< 5000 {
            var mutated = header
            for _ in 0 ..< Int.random(in: 1 ... 8, using: &generator) {
                let at = Int.random(in: 0 ..< mutated.count, using: &generator)
                switch round % 3 {
                case 0: mutated[at] = UInt8.random(in: 0 ... 255, using: &generator)
                case 1: mutated[at] ^= 1 << UInt8.random(in: 0 ... 7, using: &generator)
                default: mutated[at] = [0x00, 0xFF, 0x7F, 0x80][Int.random(in: 0 ... 3, using: &generator)]
                }
            }
            if round % 50 == 0 { mutated = Array(mutated.prefix(Int.random(in: 0 ..< mutated.count, using: &generator))) }
            do {
                let parsedHeader = try CDOC2Header.parse(mutated)
                _ = parsedHeader.records.compactMap(CDOC2Reader.recipient)
                parsed += 1
            } catch is CDOCError {
                refused += 1
            }
        }
        XCTAssertEqual(parsed + refused, 5000)
        XCTAssertGreaterThan(refused, 0)
    }
}

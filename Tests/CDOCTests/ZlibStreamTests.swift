import XCTest
@testable import CDOC

final class ZlibStreamTests: XCTestCase {
    private func compress(_ data: [UInt8]) throws -> [UInt8] {
        let deflater = try ZlibDeflater()
        var out: [UInt8] = []
        try data.withUnsafeBytes { try deflater.feed($0) { out += $0 } }
        try deflater.finish { out += $0 }
        return out
    }

    /// Output comes out whole however the input is split, with a 16-byte output buffer that fills
    /// on every call (zeros inflate in 258-byte matches).
    func testOutputIsWholeWithATinyBufferAndSplitInput() throws {
        let plain = [UInt8](repeating: 0, count: 100_000) + Array("end".utf8)
        let compressed = try compress(plain)
        for split in [compressed.count, compressed.count - 3, compressed.count / 2] {
            let inflater = try ZlibInflater(bufferSize: 16)
            var out: [UInt8] = []
            try compressed[..<split].withUnsafeBytes { try inflater.feed($0) { out += $0 } }
            try compressed[split...].withUnsafeBytes { try inflater.feed($0) { out += $0 } }
            XCTAssertTrue(inflater.finished)
            XCTAssertEqual(out, plain)
        }
    }

    func testBytesAfterTheStreamAndGarbageAreRefused() throws {
        let compressed = try compress(Array("hello".utf8))
        let inflater = try ZlibInflater()
        XCTAssertThrowsError(try (compressed + [1]).withUnsafeBytes { try inflater.feed($0) { _ in } }) {
            XCTAssertEqual(($0 as? CDOCError)?.code, .malformed)
        }
        XCTAssertThrowsError(try [UInt8]([0x78, 0x9C, 0xFF, 0xFF, 0xFF]).withUnsafeBytes { try ZlibInflater().feed($0) { _ in } }) {
            XCTAssertEqual(($0 as? CDOCError)?.code, .malformed)
        }
    }

    func testTheOutputCapHolds() throws {
        let compressed = try compress([UInt8](repeating: 7, count: 1_000_000))
        let inflater = try ZlibInflater(limits: .init(maximumOutput: 500_000))
        XCTAssertThrowsError(try compressed.withUnsafeBytes { try inflater.feed($0) { _ in } }) {
            XCTAssertEqual(($0 as? CDOCError)?.code, .limit)
        }
    }

    /// The whole-buffer form CDOC 1.x uses: exactly the limit inflates, one byte over is a bomb,
    /// a truncated stream is malformed.
    func testWholeBufferInflateKeepsTheLimitAndWantsTheWholeStream() throws {
        let plain = Array(String(repeating: "Õunad ja pirnid. ", count: 3000).utf8)
        let compressed = try compress(plain)
        XCTAssertEqual(try ZlibInflater.inflate(compressed, limit: plain.count), plain)
        XCTAssertThrowsError(try ZlibInflater.inflate(compressed, limit: plain.count - 1)) { XCTAssertEqual(($0 as? CDOCError)?.code, .limit) }
        XCTAssertThrowsError(try ZlibInflater.inflate(Array(compressed.dropLast(4)), limit: plain.count)) {
            XCTAssertEqual(($0 as? CDOCError)?.code, .malformed)
        }
    }
}

import Crypto
import Foundation
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

    /// CDOC2's writer (ISA-L igzip, zlib header and trailer) makes a stream zlib and Python's
    /// zlib inflate exactly, fed in pieces of any size, and text still shrinks.
    func testIgzipStreamsInflateExactlyAndTextShrinks() throws {
        let text = Array(String(repeating: "Õunad ja pirnid, üks kord veel. ", count: 20_000).utf8)
        let random = (0..<300_000).map { _ in UInt8.random(in: 0...255) }
        for plain in [text, random, []] {
            for piece in [1, 7, 65_536, 1 << 20] {
                let deflater = try IgzipZlibDeflater()
                var compressed: [UInt8] = []
                // One byte at a time only for the first 2000 (enough to cross ISA-L's buffers' edges).
                let fed = piece == 1 ? Array(plain.prefix(2000)) : plain
                for start in stride(from: 0, to: fed.count, by: piece) {
                    try fed[start..<min(start + piece, fed.count)].withUnsafeBytes { try deflater.feed($0) { compressed += $0 } }
                }
                try deflater.finish { compressed += $0 }
                XCTAssertEqual(try ZlibInflater.inflate(compressed, limit: 1 << 24), fed, "pieces of \(piece)")
                if piece == 65_536 && plain == text { XCTAssertLessThan(compressed.count, text.count / 4, "text shrinks") }
                if piece == 65_536 && plain == random {
                    let file = FileManager.default.temporaryDirectory.appendingPathComponent("igzip-\(UUID().uuidString)")
                    defer { try? FileManager.default.removeItem(at: file) }
                    try Data(compressed).write(to: file)
                    let python = Process()
                    python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
                    python.arguments = ["-c", "import sys, zlib, hashlib; print(hashlib.sha256(zlib.decompress(open(sys.argv[1], 'rb').read())).hexdigest())", file.path]
                    let output = Pipe()
                    python.standardOutput = output
                    try python.run()
                    python.waitUntilExit()
                    let digest = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                    XCTAssertEqual(digest, Digest.hash(random).hexString, "Python's zlib inflates it")
                }
            }
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

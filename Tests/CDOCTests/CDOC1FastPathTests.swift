import Crypto
import Foundation
import SafeXML
import XCTest
@testable import CDOC

/// The payload's base64 goes from the file's pieces straight to the decoder, libxml2 seeing only
/// the markup around it (`SafeXMLStreamParser`'s literal text). Whatever is not plain base64 —
/// a character reference, a comment, CDATA, a stray byte — goes back through the parser, so the
/// result is the same as parsing it all, with pieces cut anywhere, and nothing invalid passes.
final class CDOC1FastPathTests: CDOCTestCase {
    private let transportKey = SecretBytes((0..<32).map { UInt8($0) })

    /// A CDOC 1.1 of `plain` (64-character base64 lines, as asicfs and libcdoc write them).
    private func document(_ plain: [UInt8]) throws -> [UInt8] {
        try cdoc11Document(plain, transportKey: transportKey, fileName: "x.bin")
    }

    /// Where the payload's text starts and ends in `bytes` (the last CipherValue).
    private func payloadRange(_ bytes: [UInt8]) throws -> Range<Int> {
        let text = String(decoding: bytes, as: UTF8.self)
        let start = try XCTUnwrap(text.range(of: "CipherValue>", options: .backwards, range: text.startIndex..<text.range(of: "</denc:CipherValue>", options: .backwards)!.lowerBound))
        let end = try XCTUnwrap(text.range(of: "</denc:CipherValue>", options: .backwards))
        return text.utf8.distance(from: text.startIndex, to: start.upperBound)..<text.utf8.distance(from: text.startIndex, to: end.lowerBound)
    }

    private func feed(_ bytes: [UInt8], _ sizes: [Int], to parser: SafeXMLStreamParser) throws {
        try feedInPieces(bytes, sizes, parser.feed)
    }

    /// The plaintext of `bytes` read in pieces of `sizes` (repeated), or the error.
    private func decrypt(_ bytes: [UInt8], pieces sizes: [Int]) throws -> [UInt8] {
        var plain: [UInt8] = []
        let decryptor = CDOC1PayloadDecryptor(gcm: true, key: transportKey) { plain += $0 }
        _ = try CDOC1Stream.read(payload: decryptor.take) { try feed(bytes, sizes, to: $0) }
        try decryptor.finish()
        return plain
    }

    /// Piece sizes that cut everywhere that matters: one byte, odd sizes, and pieces that end
    /// right before and right after the payload's tags (`<` and `>` at a piece boundary).
    private func sizes(around range: Range<Int>, of count: Int) -> [[Int]] {
        [[count], [1], [2], [3, 1, 2], [7], [61], [4093],
         [range.lowerBound, count], [range.lowerBound - 1, 1, count], [range.lowerBound + 1, count],
         [range.upperBound, count], [range.upperBound - 1, 1, count], [range.upperBound + 1, count]]
    }

    func testThePayloadsBase64NeverGoesThroughLibxml2() throws {
        let plain = randomBytes(100_000)
        let bytes = try document(plain)
        for sizes in [[bytes.count], [1], [7], [4093]] {
            let decoder = CDOC1Base64Decoder()
            var decoded: [UInt8] = [], literal = 0, parsed = 0
            let parser = SafeXMLStreamParser(name: "cdoc", divertedPath: CDOC1Document.payloadPath, largeText: true, literalText: { text in
                let taken = try decoder.takePrefix(text) { decoded += $0 }
                literal += taken
                return taken
            }, text: { text in
                parsed += text.count
                try decoder.take(text) { decoded += $0 }
            })
            try feed(bytes, sizes, to: parser)
            _ = try parser.finish()
            try decoder.finish { decoded += $0 }
            XCTAssertEqual(parsed, 0, "no payload text came through libxml2 (pieces \(sizes))")
            XCTAssertGreaterThan(literal, plain.count * 4 / 3, "all of it went straight to the decoder (pieces \(sizes))")
            XCTAssertEqual(decoded.count, 12 + plain.count + 16)
        }
    }

    func testPlainBase64InAnyPiecesDecrypts() throws {
        let plain = randomBytes(30_000)
        let bytes = try document(plain)
        for sizes in sizes(around: try payloadRange(bytes), of: bytes.count) {
            XCTAssertEqual(try decrypt(bytes, pieces: sizes), plain, "pieces \(sizes)")
        }
    }

    /// A character reference, a comment, CDATA and a reference to a line feed inside the
    /// base64: valid XML whose text is the same base64, so it decrypts the same, in any pieces.
    func testReferencesCommentsAndCDATAInsideTheBase64DecryptTheSame() throws {
        let plain = randomBytes(30_000)
        var bytes = try document(plain)
        let range = try payloadRange(bytes)
        func digit(at offset: Int) -> Int {
            var index = range.lowerBound + offset
            while bytes[index] == 0x0A { index += 1 }
            return index
        }
        // From the back, so earlier offsets stay where they were.
        let cdata = digit(at: 4000)
        bytes.replaceSubrange(cdata..<cdata + 8, with: Array(("<![CDATA[" + String(decoding: bytes[cdata..<cdata + 8], as: UTF8.self) + "]]>").utf8))
        bytes.insert(contentsOf: Array("&#10;".utf8), at: digit(at: 3000))
        bytes.insert(contentsOf: Array("<!-- a comment -->".utf8), at: digit(at: 2000))
        let reference = digit(at: 1000)
        bytes.replaceSubrange(reference...reference, with: Array("&#x\(String(bytes[reference], radix: 16));".utf8))
        let start = digit(at: 0)
        bytes.replaceSubrange(start...start, with: Array("&#\(bytes[start]);".utf8))
        let changed = try payloadRange(bytes)
        for sizes in sizes(around: changed, of: bytes.count) + [[reference + 2, bytes.count], [start + 1, bytes.count]] {
            XCTAssertEqual(try decrypt(bytes, pieces: sizes), plain, "pieces \(sizes)")
        }
    }

    func testAByteThatIsNotBase64InsideThePayloadIsRefusedInAnyPieces() throws {
        let plain = randomBytes(20_000)
        let good = try document(plain)
        let range = try payloadRange(good)
        for bad in ["*", "-", "\u{A0}", "QQ==", "&#42;", "&#x2D;"] {
            var bytes = good
            bytes.insert(contentsOf: Array(bad.utf8), at: range.lowerBound + 5000 + (good[range.lowerBound + 5000] == 0x0A ? 1 : 0))
            for sizes in [[bytes.count], [1], [7], [range.lowerBound + 5000, bytes.count]] {
                XCTAssertThrowsError(try decrypt(bytes, pieces: sizes), "\(bad) in pieces \(sizes)") { error in
                    XCTAssertEqual((error as? CDOCError)?.code, .malformed, "\(error)")
                    XCTAssertFalse("\(error)".contains("\n"), "one line: \(error)")
                }
            }
        }
    }

    /// Opening without a key skips the payload (to the next markup), and still reads the rest;
    /// a reference it cannot resolve there is refused as before.
    func testOpeningSkipsThePayloadAndStillRefusesAnUndeclaredEntity() throws {
        let plain = randomBytes(20_000)
        let bytes = try document(plain)
        for sizes in [[bytes.count], [1], [5], [4093]] {
            let (xml, length) = try CDOC1Stream.read(payload: nil) { try feed(bytes, sizes, to: $0) }
            XCTAssertNil(length, "the payload was not decoded")
            XCTAssertEqual(try CDOC1Document.parse(xml).property("Filename"), "x.bin", "pieces \(sizes)")
        }
        var entity = bytes
        entity.insert(contentsOf: Array("&bogus;".utf8), at: try payloadRange(bytes).lowerBound + 100)
        for sizes in [[entity.count], [1], [7]] {
            XCTAssertThrowsError(try CDOC1Stream.read(payload: nil) { try feed(entity, sizes, to: $0) }) { error in
                XCTAssertEqual((error as? CDOCError)?.code, .malformed, "\(error)")
            }
            XCTAssertThrowsError(try decrypt(entity, pieces: sizes))
        }
    }
}

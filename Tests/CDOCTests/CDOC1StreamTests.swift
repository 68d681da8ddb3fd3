import Crypto
import Foundation
import SafeXML
import XCTest
@testable import CDOC

/// The CDOC 1.x reader takes the file in pieces (1 MiB from disk): where a piece ends — inside a
/// base64 group, inside the white space between lines, inside a UTF-8 character of a name, inside
/// a tag — changes nothing.
final class CDOC1StreamTests: CDOCTestCase {
    private let fileName = "päev ☀ öö.txt"

    /// A CDOC 1.1 whose payload seals `plain` with `transportKey` (LF or CRLF line ends).
    private func document(_ plain: [UInt8], transportKey: SecretBytes, crlf: Bool) throws -> [UInt8] {
        let bytes = try cdoc11Document(plain, transportKey: transportKey, fileName: fileName)
        guard crlf else { return bytes }
        return Array(String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n").utf8)
    }

    /// Reads `bytes` fed in pieces of `sizes` (repeated), decrypting the payload as it streams.
    private func read(_ bytes: [UInt8], pieces sizes: [Int], key: SecretBytes) throws -> (CDOC1Document, [UInt8]) {
        var plain: [UInt8] = []
        let decryptor = CDOC1PayloadDecryptor(gcm: true, key: key) { plain += $0 }
        let (xml, length) = try CDOC1Stream.read(payload: decryptor.take) { parser in
            try feedInPieces(bytes, sizes, parser.feed)
        }
        try decryptor.finish()
        XCTAssertEqual(length, Int64(12 + plain.count + 16), "the decoded payload: IV, ciphertext, tag")
        return (try CDOC1Document.parse(xml), plain)
    }

    func testPiecesCutAnywhereGiveTheSameFilesAndNames() throws {
        let transportKey = SecretBytes(randomBytes(32))
        let plain = randomBytes(70_001)
        for crlf in [false, true] {
            let bytes = try document(plain, transportKey: transportKey, crlf: crlf)
            for sizes in [[bytes.count], [1], [7], [3, 1, 2], [4093], [65_537]] {
                let (document, decrypted) = try read(bytes, pieces: sizes, key: transportKey)
                XCTAssertEqual(decrypted, plain, "pieces \(sizes), CRLF \(crlf)")
                XCTAssertEqual(document.property("Filename"), fileName, "pieces \(sizes)")
                XCTAssertEqual(document.keys.count, 1)
            }
        }
    }

    /// A document in UTF-16 (byte order mark and declaration) is gathered and converted first, as
    /// `SafeXMLDocument.parse` does; pieces cut inside a UTF-16 code unit change nothing.
    func testAUTF16DocumentReadsTheSame() throws {
        let transportKey = SecretBytes(randomBytes(32))
        let plain = randomBytes(5_000)
        let utf8 = String(decoding: try document(plain, transportKey: transportKey, crlf: false), as: UTF8.self)
            .replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding=\"UTF-16\"")
        let utf16 = [UInt8]([0xFF, 0xFE]) + utf8.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        for sizes in [[utf16.count], [1], [3, 5]] {
            let (document, decrypted) = try read(utf16, pieces: sizes, key: transportKey)
            XCTAssertEqual(decrypted, plain, "pieces \(sizes)")
            XCTAssertEqual(document.property("Filename"), fileName, "pieces \(sizes)")
        }
    }

    func testBase64CutInsideGroupsAndPaddingDecodesAndBadTextIsRefusedInAnyPiece() throws {
        func decode(_ text: String, pieces size: Int) throws -> [UInt8] {
            let decoder = CDOC1Base64Decoder(); var out: [UInt8] = []
            let bytes = Array(text.utf8)
            for start in stride(from: 0, to: bytes.count, by: size) {
                try bytes[start..<min(start + size, bytes.count)].withUnsafeBytes { try decoder.take($0) { out += $0 } }
            }
            try decoder.finish { out += $0 }
            return out
        }
        for size in 1...6 {
            XCTAssertEqual(try decode(" QUJD\r\nREVG\n\tR0g=  ", pieces: size), Array("ABCDEFGH".utf8), "pieces of \(size)")
            XCTAssertEqual(try decode("QUI=\n", pieces: size), Array("AB".utf8))
            XCTAssertEqual(try decode("QQ==", pieces: size), Array("A".utf8))
            for bad in ["QUJD*REVG", "QUJD\u{A0}REVG", "QUJDR", "QQ=", "QQ==QUJD", "Q===", "QUJD=", "QQ=\n=x"] {
                XCTAssertThrowsError(try decode(bad, pieces: size), "\(bad) in pieces of \(size)")
            }
        }
    }

    func testADoctypeFedByteByByteIsRefusedInOneLine() throws {
        // A long comment first: the DOCTYPE arrives after the first bytes that decide the encoding.
        let xxe = Array(("<?xml version=\"1.0\"?>\n<!--" + String(repeating: "x", count: 3000) + "-->\n" + """
        <!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>
        <denc:EncryptedData xmlns:denc="http://www.w3.org/2001/04/xmlenc#">&x;</denc:EncryptedData>
        """).utf8)
        XCTAssertThrowsError(try CDOC1Stream.read(payload: { _ in XCTFail("no payload") }) { parser in
            for byte in xxe { try [byte].withUnsafeBytes { try parser.feed($0) } }
        }) { error in
            XCTAssertEqual((error as? CDOCError)?.code, .malformed)
            XCTAssertTrue("\(error)".contains("DTD or entities"), "\(error)")
            XCTAssertFalse("\(error)".contains("\n"), "one line: \(error)")
        }
    }
}

import SafeXML
import XCTest
@testable import CDOC

/// base64Binary in CDOC 1.x XML: the white space writers put between lines (LF, CRLF, spaces,
/// tabs: libdigidoc wraps at 64 columns) is dropped; anything else that is not base64 is refused.
final class CDOC1Base64Tests: XCTestCase {
    /// The bytes of `<v>text</v>` as CDOC1Document reads them (the document lives through the call).
    private func decoded(_ text: String) throws -> [UInt8] {
        let document = try SafeXMLDocument.parse(Array("<v>\(text)</v>".utf8), name: "test")
        return try withExtendedLifetime(document) { try CDOC1Document.base64(try XCTUnwrap(document.root), "the payload") }
    }

    func testXMLWhiteSpaceIsDroppedAndOtherTextRefused() throws {
        XCTAssertEqual(try decoded(" QUJD\r\nREVG\n\tR0g=  "), Array("ABCDEFGH".utf8))
        XCTAssertThrowsError(try decoded("QUJD\u{A0}REVG")) { XCTAssertEqual(($0 as? CDOCError)?.code, .malformed) }
        XCTAssertThrowsError(try decoded("QUJD*REVG")) { XCTAssertEqual(($0 as? CDOCError)?.code, .malformed) }
    }
}

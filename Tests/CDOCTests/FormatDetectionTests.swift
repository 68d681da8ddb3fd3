import XCTest
@testable import CDOC

final class FormatDetectionTests: XCTestCase {
    func testTheFormatIsToldByItsFirstBytes() {
        XCTAssertEqual(EncryptedFormat.family(ofPrefix: Array("CDOC\u{02}".utf8) + [0, 0]), .cdoc2)
        XCTAssertEqual(EncryptedFormat.family(ofPrefix: [0xEF, 0xBB, 0xBF] + Array("<?xml version".utf8)), .xml)
        XCTAssertNil(EncryptedFormat.family(ofPrefix: Array("PK\u{03}\u{04}".utf8)))
        XCTAssertNil(EncryptedFormat.family(ofPrefix: Array("CDOC\u{01}".utf8)))
    }
}

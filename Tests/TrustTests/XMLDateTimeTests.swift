import Foundation
@testable import Trust
import XCTest

/// xsd:dateTime as trusted lists write it.
final class XMLDateTimeTests: XCTestCase {
    func testUTCOffsetsAndFractionsAreRead() {
        XCTAssertEqual(XMLDateTime.parse("2016-06-30T22:00:00Z"), utc("2016-06-30T22:00:00Z"))
        XCTAssertEqual(XMLDateTime.parse(" 2016-07-01T01:00:00+03:00\n"), utc("2016-06-30T22:00:00Z"))
        XCTAssertEqual(XMLDateTime.parse("2016-06-30T22:00:00"), utc("2016-06-30T22:00:00Z"))
        XCTAssertEqual(XMLDateTime.parse("2016-06-30T22:00:00.5Z")?.timeIntervalSince(utc("2016-06-30T22:00:00Z")), 0.5)
    }

    func testMalformedDatesAreRejected() {
        for text in ["", "2016-06-30", "2016-13-01T00:00:00Z", "2016-06-30T22:00:00Q", "2016-06-30 22:00:00Z", "20x6-06-30T22:00:00Z"] {
            XCTAssertNil(XMLDateTime.parse(text), text)
        }
    }

    func testMessagesUseTheSameForm() {
        XCTAssertEqual(XMLDateTime.format(utc("2013-04-23T11:49:30Z")), "2013-04-23T11:49:30Z")
    }
}

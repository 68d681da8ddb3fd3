import SmartCard
import XCTest

final class APDUTests: XCTestCase {
    func testShortCommandEncodings() {
        XCTAssertEqual(CommandAPDU(ins: 0xA4, p1: 0x04, p2: 0x0C, data: [0xA0, 0x00]).bytes, [0x00, 0xA4, 0x04, 0x0C, 0x02, 0xA0, 0x00])
        XCTAssertEqual(CommandAPDU(ins: 0xB0, p1: 0x00, p2: 0xC0, le: 256).bytes, [0x00, 0xB0, 0x00, 0xC0, 0x00])
        XCTAssertEqual(CommandAPDU(ins: 0x2A, p1: 0x9E, p2: 0x9A, data: [1, 2], le: 256).bytes, [0x00, 0x2A, 0x9E, 0x9A, 0x02, 1, 2, 0x00])
        XCTAssertEqual(CommandAPDU(ins: 0x20, p1: 0x00, p2: 0x85).bytes, [0x00, 0x20, 0x00, 0x85])
    }

    func testTheDescriptionNeverShowsTheData() {
        let verify = CommandAPDU(ins: 0x20, p1: 0x00, p2: 0x85, data: Array("12345".utf8) + [UInt8](repeating: 0xFF, count: 7))
        XCTAssertEqual(verify.description, "00 20 00 85 Lc=12")
    }

    func testAResponseShorterThanAStatusWordMeansTheCardIsGone() throws {
        XCTAssertThrowsError(try ResponseAPDU(bytes: [])) { XCTAssertEqual($0 as? CardError, .removed) }
        XCTAssertThrowsError(try ResponseAPDU(bytes: [0x90])) { XCTAssertEqual($0 as? CardError, .removed) }
        let ok = try ResponseAPDU(bytes: [1, 2, 0x90, 0x00])
        XCTAssertEqual(ok.data, [1, 2])
        XCTAssertEqual(ok.sw, 0x9000)
        XCTAssertTrue(ok.isSuccess)
    }
}

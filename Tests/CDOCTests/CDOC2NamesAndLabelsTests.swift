import XCTest
@testable import CDOC

final class CDOC2NamesAndLabelsTests: XCTestCase {
    func testLabelsInTheirWrittenForms() {
        XCTAssertEqual(CDOC2KeyLabel.displayName("plain words"), "plain words")
        XCTAssertEqual(CDOC2KeyLabel.displayName("data:V=1&FILE=rsa_pub.pem&TYPE=pub_key"), "rsa_pub.pem")
        XCTAssertEqual(CDOC2KeyLabel.displayName("data:,LABEL=mylabel&TYPE=secret&V=1"), "mylabel")
        XCTAssertEqual(CDOC2KeyLabel.displayName("data:v=1&type=ID-card&serial_number=PNOEE-38001085718&cn=J%C3%95EORG%2CJAAK-KRISTJAN%2C38001085718&server_exp=1"),
                       "JÕEORG,JAAK-KRISTJAN,38001085718")
        XCTAssertEqual(CDOC2KeyLabel.displayName("data:,cn=A%20B&serial_number=PNOEE-1&type=Digi-ID&v=1"), "A B")
        XCTAssertEqual(CDOC2KeyLabel.displayName("data:;base64," + "dj0xJnR5cGU9cHcmbGFiZWw9Ym94"), "box")
    }

    func testLabelsThatDoNotParseAreShownAsWritten() {
        for label in ["data:", "data:,v=1", "data:,type=pw&label=%zz&v=1", "data:;base64,!!!", "DATA:no pairs"] {
            XCTAssertEqual(CDOC2KeyLabel.displayName(label), label)
        }
    }

    func testWrittenLabelsAreSortedAndEncoded() {
        XCTAssertEqual(CDOC2KeyLabel.forKind("pw", label: "a&b c"), "data:,v=1&label=a%26b%20c&type=pw")
        XCTAssertEqual(CDOC2KeyLabel.fields(CDOC2KeyLabel.forKind("pw", label: "a&b c"))?["label"], "a&b c")
    }

    func testEstonianEIDsAreToldByTheirPolicies() {
        XCTAssertEqual(CDOC2KeyLabel.eIDType(policies: ["1.3.6.1.4.1.51361.1.1.1"]), "ID-card")
        XCTAssertEqual(CDOC2KeyLabel.eIDType(policies: ["0.4.0.2042.1.2", "1.3.6.1.4.1.51455.1.1.1"]), "ID-card")
        XCTAssertEqual(CDOC2KeyLabel.eIDType(policies: ["1.3.6.1.4.1.51361.1.1.3"]), "Digi-ID")
        XCTAssertEqual(CDOC2KeyLabel.eIDType(policies: ["2.999.1.3.6.1.4.1.51361.1.2.4"]), "Digi-ID E-RESIDENT")
        XCTAssertNil(CDOC2KeyLabel.eIDType(policies: ["0.4.0.194112.1.2"]))
    }

    func testSafeAndUnsafeNames() {
        for name in ["a.txt", "Tõnu leping.pdf", "long_☠_name", ".hidden", "CONTRACT.txt"] { XCTAssertTrue(SafeFileName.isSafe(name), name) }
        for name in ["", ".", "..", "../x", "a/b", "a\\b", " x", "-x", "x ", "x.", "con", "LPT1.txt", "a\u{7}b",
                     "a\u{202E}b", "a\u{FFFE}", "q?", "a:b", "a\u{85}b", "a\u{2028}b", String(repeating: "x", count: 256)] {
            XCTAssertFalse(SafeFileName.isSafe(name), name)
        }
        XCTAssertThrowsError(try SafeFileName.checked([0x61, 0xFF])) { XCTAssertEqual(($0 as? CDOCError)?.code, .unsafeName) }
        XCTAssertEqual(SafeFileName.escaped("a\u{1B}[31mb\u{2029}"), "a\\u{1b}[31mb\\u{2029}")
    }

    func testPAXRecordsCountTheirOwnLength() {
        XCTAssertEqual(TarWriter.paxRecord("path", Array("x".utf8)), Array("9 path=x\n".utf8))
        let record = TarWriter.paxRecord("path", [UInt8](repeating: 0x41, count: 95))
        XCTAssertEqual(record.count, 105)
        XCTAssertEqual(Array(record.prefix(4)), Array("105 ".utf8))
    }
}

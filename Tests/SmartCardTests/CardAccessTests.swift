@testable import SmartCard
import XCTest

final class CardAccessTests: XCTestCase {
    /// ICAO 9303-11 Appendix G.1's PACEInfo (in a SET, as gmrtd's pace_test.go builds it).
    func testTheWorkedExamplesPACEInfo() throws {
        let access = try CardAccess(der: bytes("3114 3012 060A 04007F00070202040202 020102 02010D"))
        XCTAssertEqual(access.paceInfos, [PACEInfo(protocolOID: PACEAlgorithm.ecdhGenericMappingAES128.oid, version: 2, parameterID: 13)])
        let parameters = try access.parameters()
        XCTAssertEqual(parameters.algorithm, .ecdhGenericMappingAES128)
        XCTAssertEqual(parameters.curve, .brainpoolP256r1)
        XCTAssertEqual(parameters.parameterID, 13)
    }

    /// Without a parameter ID the card is an IDEMIA one: P-256 (spec §6.1), and MSE names none.
    func testNoParameterIDMeansP256() throws {
        let parameters = try CardAccess(der: bytes("3111 300F 060A 04007F00070202040204 020102")).parameters()
        XCTAssertEqual(parameters.algorithm, .ecdhGenericMappingAES256)
        XCTAssertEqual(parameters.curve, .p256)
        XCTAssertNil(parameters.parameterID)
    }

    /// Two PACEInfos in either order (the EF.CardAccess of gmrtd's TestSelectPaceForConfig):
    /// chip-authentication mapping (4.6.4) is not spoken here, so generic mapping is chosen.
    func testTheFirstSupportedPACEInfoIsChosen() throws {
        for file in ["31283012060a04007f000702020402040201020201103012060a04007f00070202040604020102020110",
                     "31283012060a04007f000702020406040201020201103012060a04007f00070202040204020102020110"] {
            let parameters = try CardAccess(der: bytes(file)).parameters()
            XCTAssertEqual(parameters.algorithm, .ecdhGenericMappingAES256)
            XCTAssertEqual(parameters.curve, .brainpoolP384r1)
        }
    }

    func testOtherSecurityInfosAreSkipped() throws {
        // A ChipAuthenticationInfo (0.4.0.127.0.7.2.2.3.2.2) before the PACEInfo.
        let access = try CardAccess(der: bytes("3122 300F 060A 04007F00070202030202 020101 300F 060A 04007F00070202040203 020102"))
        XCTAssertEqual(access.paceInfos.count, 1)
        XCTAssertEqual(try access.parameters().algorithm, .ecdhGenericMappingAES192)
    }

    func testUnsupportedChoicesAreNamed() {
        let cases = [
            ("3114 3012 060A 04007F00070202040404 020102 02010C", "0.4.0.127.0.7.2.2.4.4.4 on parameters 12"),   // integrated mapping
            ("3114 3012 060A 04007F00070202040204 020102 02010E", "0.4.0.127.0.7.2.2.4.2.4 on parameters 14"),   // brainpoolP320r1
            ("3114 3012 060A 04007F00070202040104 020102 020102", "0.4.0.127.0.7.2.2.4.1.4 on parameters 2"),    // DH
            ("3111 300F 060A 04007F00070202040204 020101", "0.4.0.127.0.7.2.2.4.2.4"),                           // version 1
            ("3100", "names no PACE protocol"),
        ]
        for (file, named) in cases {
            XCTAssertThrowsError(try CardAccess(der: bytes(file)).parameters(), file) { error in
                guard case .unsupported(let text) = error as? PACEError else { return XCTFail("\(error)") }
                XCTAssertTrue(text.contains(named), text)
            }
        }
    }

    func testTheFilesUnusedTailIsIgnoredButOtherTrailingBytesAreNot() throws {
        let file = "3111 300F 060A 04007F00070202040204 020102"
        XCTAssertNoThrow(try CardAccess(der: bytes(file + "0000FFFF")))
        XCTAssertThrowsError(try CardAccess(der: bytes(file + "3000")))
    }

    func testHostileFilesGiveErrors() {
        let hostile = [
            "", "31", "3180", "31 81", "31 82 FFFF", "31 84 00000000", "31 83 FFFFFF 30",           // lengths cut, indefinite, huge
            "3004 0602 0400",                                                                     // not a SET
            "3102 0200", "3104 3002 0200",                                                        // not SEQUENCEs of OIDs
            "3104 3002 0600",                                                                     // an empty OID
            "310E 300C 060A 04007F00070202040204",                                                // PACEInfo without a version
            "3116 3014 060A 04007F00070202040204 020102 02010C 0500",                             // four fields
            "3111 300F 060A 04007F00070202040204 0201FF",                                         // negative version
            "3113 3011 060A 04007F00070202040204 020102 0200",                                    // empty INTEGER
            "3118 3016 060A 04007F00070202040204 020102 0205 0100000000",                         // oversized INTEGER
            "3111 3010 060A 04007F00070202040204 020102",                                         // inner length one too long
            "3111 300E 060A 04007F00070202040204 020102",                                         // inner length one too short
            "3105 1FFFFFFF01",                                                                    // a four-byte tag
            "3106 30043002 3000",                                                                 // nested garbage
        ]
        for file in hostile {
            XCTAssertThrowsError(try CardAccess(der: bytes(file)).parameters(), file) { error in
                XCTAssertNotNil(error as? PACEError, "\(file): \(error)")
            }
        }
    }

    func testEveryTruncationAndSingleByteChangeIsSafe() {
        let file = bytes("3128 3012 060a 04007f00070202040204 020102 020110 3012 060a 04007f00070202040604 020102 020110")
        for length in 0 ..< file.count {
            XCTAssertThrowsError(try CardAccess(der: Array(file.prefix(length))), "\(length) bytes")
        }
        // No crash, whatever the byte becomes: each answer is a value or a PACEError.
        for index in file.indices {
            for value: UInt8 in [0x00, 0x01, 0x7F, 0x80, 0x81, 0x82, 0xFF, file[index] ^ 0x20] {
                var changed = file
                changed[index] = value
                do { _ = try CardAccess(der: changed).parameters() } catch { XCTAssertNotNil(error as? PACEError) }
            }
        }
    }

    func testRandomBytesNeverCrash() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0 ..< 2000 {
            let count = Int.random(in: 0 ... 40, using: &generator)
            var file = (0 ..< count).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }
            if !file.isEmpty { file[0] = 0x31 }
            do { _ = try CardAccess(der: file).parameters() } catch { XCTAssertNotNil(error as? PACEError) }
        }
    }

    func testOIDsAreShownDotted() {
        XCTAssertEqual(CardAccess.dotted(bytes("04007F00070202040204")), "0.4.0.127.0.7.2.2.4.2.4")
        XCTAssertEqual(CardAccess.dotted(bytes("2A864886F70D")), "1.2.840.113549")
    }
}

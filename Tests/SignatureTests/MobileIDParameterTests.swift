import Foundation
import Signing
import XCTest

/// `.asicfs/sign/mobile-id` parameters are checked in form before anything is sent: each refusal
/// names the field and why.
final class MobileIDParameterTests: XCTestCase {
    func parse(_ text: String) throws -> MobileIDParameters {
        try MobileIDParameters(SigningMethod.mobileID.parse(text))
    }

    func assertRefused(_ text: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try SigningMethod.mobileID.parse(text), file: file, line: line) { error in
            XCTAssertTrue(error is SigningParameterError, "\(type(of: error))", file: file, line: line)
            XCTAssertTrue("\(error)".contains(expected), "\(error)", file: file, line: line)
        }
    }

    func testMobileIDIsAvailableWithItsUsage() {
        XCTAssertTrue(SigningMethod.mobileID.usage.contains("phone=+372... idcode=..."), SigningMethod.mobileID.usage)
        XCTAssertTrue(SigningMethod.mobileID.usage.contains("echo \"phone=+37200000766 idcode=60001019906\""))
        XCTAssertFalse(SigningMethod.mobileID.usage.contains("not available"))
    }

    func testGoodParameters() throws {
        let estonian = try parse("phone=+37200000766 idcode=60001019906")
        XCTAssertEqual(estonian.phone, "+37200000766")
        XCTAssertEqual(estonian.personalCode, "60001019906")
        XCTAssertEqual(estonian.language, .estonian, "Estonian numbers default to EST")
        XCTAssertNil(estonian.displayText)

        XCTAssertEqual(try parse("phone='+372 0000 0766' idcode=60001019906").phone, "+37200000766", "spaces are removed")
        XCTAssertEqual(try parse("phone=+37060000666 idcode=50001018865").language, .lithuanian)
        XCTAssertEqual(try parse("phone=+37200000766 idcode=60001019906 language=eng").language, .english)
        XCTAssertEqual(try parse("phone=+37200000766 idcode=60001019906 language=RUS").language, .russian)
        XCTAssertEqual(try parse("phone=+37060000666 idcode=50001018865 language=LIT").language, .lithuanian)
        // Other countries: English, and an Estonian-or-Lithuanian code.
        let other = try parse("phone=+3580000000766 idcode=50001018865")
        XCTAssertEqual(other.language, .english)
        XCTAssertNil(try parse("phone=+37200000766 idcode=60001019906 message=").displayText, "an empty message is none")
        XCTAssertEqual(try parse("phone=+37200000766 idcode=60001019906 role=Director city=Tartu").phone, "+37200000766")
    }

    func testMessageEncodingIsChosenByItsCharacters() throws {
        let plain = try XCTUnwrap(try parse("phone=+37200000766 idcode=60001019906 message='Sign contract Nr 5 (Ä, ö, ü)'").displayText)
        XCTAssertEqual(plain.format, .gsm7)
        XCTAssertEqual(plain.text, "Sign contract Nr 5 (Ä, ö, ü)")
        let estonian = try XCTUnwrap(try parse("phone=+37200000766 idcode=60001019906 message='Allkirjasta leping õ'").displayText)
        XCTAssertEqual(estonian.format, .ucs2, "õ is not in the GSM-7 alphabet")
        let cyrillic = try XCTUnwrap(try MobileIDDisplayText("Подписать договор"))
        XCTAssertEqual(cyrillic.format, .ucs2)
        XCTAssertEqual(try MobileIDDisplayText(String(repeating: "a", count: 100)).format, .gsm7)
        XCTAssertEqual(try MobileIDDisplayText("€[]^|" + String(repeating: "a", count: 95)).format, .gsm7, "5 extension characters fit")
        XCTAssertEqual(try MobileIDDisplayText("€[]^|{ and more").format, .ucs2, "6 extension characters: UCS-2 when short")
        XCTAssertEqual(try MobileIDDisplayText(String(repeating: "õ", count: 50)).format, .ucs2)
    }

    func testBadPhones() {
        assertRefused("idcode=60001019906", "mobile-id: 'phone=+372...' is required")
        assertRefused("phone=37200000766 idcode=60001019906", "include the country code")
        assertRefused("phone=+3721234 idcode=60001019906", "phone '+3721234' must be + and the country code followed by the number, 8 to 30 digits")
        assertRefused("phone=+372-0000-0766 idcode=60001019906", "8 to 30 digits")
        assertRefused("phone=+372abc00766 idcode=60001019906", "8 to 30 digits")
        assertRefused("phone=+\(String(repeating: "3", count: 31)) idcode=60001019906", "8 to 30 digits")
        assertRefused("phone=+ idcode=60001019906", "8 to 30 digits")
    }

    func testBadPersonalCodes() {
        assertRefused("phone=+37200000766", "mobile-id: 'idcode=...' is required")
        assertRefused("phone=+37200000766 idcode=6000101990", "mobile-id: idcode: a personal code has 11 digits, '6000101990' does not")
        assertRefused("phone=+37200000766 idcode=6000101990X", "has 11 digits")
        assertRefused("phone=+37200000766 idcode=60001019907", "mobile-id: idcode: the check digit of '60001019907' is wrong")
        assertRefused("phone=+37200000766 idcode=60013019906", "mobile-id: idcode: '60013019906' does not hold a valid birth date")
        assertRefused("phone=+37200000766 idcode=60002309906", "does not hold a valid birth date")
        assertRefused("phone=+37200000766 idcode=70001019906", "does not start with a century digit 1-6")
        assertRefused("phone=+37060000666 idcode=50001018866", "the check digit of '50001018866' is wrong")
    }

    func testBadLanguages() {
        assertRefused("phone=+37200000766 idcode=60001019906 language=FIN", "mobile-id: language must be EST, ENG, RUS or LIT, not 'FIN'")
        assertRefused("phone=+37200000766 idcode=60001019906 language=LIT", "LIT is not shown on Estonian (+372) numbers")
        assertRefused("phone=+37060000666 idcode=50001018865 language=EST", "EST is not shown on Lithuanian (+370) numbers")
    }

    func testBadMessages() {
        let base = "phone=+37200000766 idcode=60001019906 message="
        assertRefused(base + String(repeating: "a", count: 101), "mobile-id: message: at most 100 characters (GSM-7); this one has 101")
        assertRefused(base + "'" + String(repeating: "õ", count: 51) + "'",
                      "mobile-id: message: at most 50 characters when it needs UCS-2 (it holds 'õ', which GSM-7 lacks); this one has 51")
        assertRefused(base + "'Sign 🖊'", "mobile-id: message: '🖊' cannot be shown on a SIM")
        assertRefused(base + "'" + String(repeating: "[]", count: 3) + String(repeating: "a", count: 50) + "'",
                      "mobile-id: message: at most 5 of the characters € [ ] ^ | { } \\ ~ fit a GSM-7 message (this one has 6)")
    }

    func testUnknownParametersAreRefused() {
        assertRefused("phone=+37200000766 idcode=60001019906 pin=12345", "mobile-id: unknown parameter 'pin'")
    }
}

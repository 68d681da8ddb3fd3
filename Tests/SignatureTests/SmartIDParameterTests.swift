import Configuration
import Foundation
import HTTP
@testable import Signing
import XCTest

/// `sign/smart-id` parameters and settings are checked before anything is sent: each mistake is a
/// sentence naming the field and why.
final class SmartIDParameterTests: XCTestCase {
    func testMistakesInTheParametersAreNamed() {
        let cases: [(String, String)] = [
            ("", "smart-id: say who signs: 'country=EE idcode=...' (EE, LV or LT), 'document=PNOEE-...', or qr=yes"),
            ("display=pin", "smart-id: say who signs: 'country=EE idcode=...' (EE, LV or LT), 'document=PNOEE-...', or qr=yes"),
            ("country=EE idcode=30303039914 document=PNOEE-30303039914-MOCK-Q", "smart-id: give either idcode= or document=, not both"),
            ("idcode=30303039914", "smart-id: idcode= needs country=EE, LV or LT (the country of the personal code)"),
            ("country=FI idcode=30303039914", "smart-id: country must be EE, LV or LT (the country of the personal code), not 'FI'"),
            ("country=EE idcode=3030303991", "smart-id: idcode: a personal code has 11 digits, '3030303991' does not"),
            ("country=EE idcode=30303039915", "smart-id: idcode: the check digit of '30303039915' is wrong"),
            ("country=LT idcode=30313039914", "smart-id: idcode: '30313039914' does not hold a valid birth date"),
            ("country=LV idcode=030303-10013", "smart-id: idcode: the check digit of '030303-10013' is wrong"),
            ("document=PNOFI-30303039914-MOCK-Q",
             "smart-id: document: 'PNOFI-30303039914-MOCK-Q' does not start with PNOEE-, PNOLV- or PNOLT- (a document number looks like PNOEE-30303039914-MOCK-Q)"),
            ("document=30303039914",
             "smart-id: document: '30303039914' does not start with PNOEE-, PNOLV- or PNOLT- (a document number looks like PNOEE-30303039914-MOCK-Q)"),
            ("document=PNOEE-30303039914/../x",
             "smart-id: document: 'PNOEE-30303039914/../x' holds characters a document number has not (a document number looks like PNOEE-30303039914-MOCK-Q)"),
            ("document=PNOEE-30303039915-MOCK-Q",
             "smart-id: document: the personal code in 'PNOEE-30303039915-MOCK-Q' is not valid: the check digit of '30303039915' is wrong"),
            ("document=PNOEE-30303039914MOCK",
             "smart-id: document: 'PNOEE-30303039914MOCK' has 'MOCK' after the personal code (a document number looks like PNOEE-30303039914-MOCK-Q)"),
            ("country=EE idcode=30303039914 display=face", "smart-id: display must be 'pin' or 'confirmation', not 'face'"),
            ("country=EE idcode=30303039914 message=\"\"", "smart-id: message is empty"),
            ("country=EE idcode=30303039914 message=\"a\tb\"", "smart-id: message must be one line of text (it holds a control character)"),
            ("country=EE idcode=30303039914 message=\(String(repeating: "x", count: 61))",
             "smart-id: message has 61 characters; with display=pin the phone shows at most 60 (display=confirmation allows 200)"),
            ("country=EE idcode=30303039914 display=confirmation message=\(String(repeating: "õ", count: 201))",
             "smart-id: message has 201 characters; the phone shows at most 200"),
            ("country=EE idcode=30303039914 phone=+37200000766",
             "smart-id: unknown parameter 'phone' (known: city, country, display, document, idcode, message, postal-code, qr, role, state)"),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try SigningMethod.smartID.parse(text), text) {
                XCTAssertEqual("\($0)", message, text)
                XCTAssertTrue($0 is SigningParameterError, text)
            }
        }
    }

    func testGoodParametersBecomeTheRequest() throws {
        let person = try SmartIDRequest(try SigningMethod.smartID.parse("country=lv idcode=03030310012"))
        XCTAssertEqual(person.account, .person(country: "LV", code: "030303-10012"))
        XCTAssertEqual(person.account.pathSuffix, "etsi/PNOLV-030303-10012")
        XCTAssertEqual(person.display, .pin)
        XCTAssertEqual(person.interactions, [["type": "displayTextAndPIN", "displayText60": SmartIDRequest.defaultMessage]])

        let long = String(repeating: "ä", count: 100)
        let document = try SmartIDRequest(try SigningMethod.smartID.parse(
            "document=PNOLT-30303039914-MOCK-Q display=confirmation message=\(long)"))
        XCTAssertEqual(document.account.pathSuffix, "document/PNOLT-30303039914-MOCK-Q")
        XCTAssertEqual(document.interactions, [
            ["type": "confirmationMessage", "displayText200": long],
            // The PIN screen, for apps without the confirmation screen, gets the text cut to 60.
            ["type": "displayTextAndPIN", "displayText60": String(repeating: "ä", count: 59) + "…"],
        ])
        XCTAssertTrue(SigningMethod.smartID.usage.contains("[display=pin|confirmation] [message=TEXT]"))
    }

    func testMistakesInTheSettingsAreNamed() throws {
        let cases: [(String, String)] = [
            ("smart-id.relying-party-uuid=not-a-uuid",
             "smart-id.relying-party-uuid must be a UUID like 00000000-0000-4000-8000-000000000000, not 'not-a-uuid'"),
            ("smart-id.relying-party-name=\(String(repeating: "N", count: 33))",
             "smart-id.relying-party-name must be 1 to 32 bytes long (it is 33)"),
        ]
        let parameters = try SigningMethod.smartID.parse("country=EE idcode=30303039914")
        for (setting, message) in cases {
            let configuration = try Configuration.load(explicitPath: "/dev/null", overrides: [
                "tsl=none", "demo=yes", "smart-id.tls-cert=/dev/null", setting,
            ])
            let context = SignerContext(environment: try SignatureEnvironment(configuration: configuration), cancellation: Cancellation())
            XCTAssertThrowsError(try SigningMethod.smartID.signer(parameters, context: context), setting) {
                XCTAssertEqual("\($0)", message, setting)
            }
        }
    }
}

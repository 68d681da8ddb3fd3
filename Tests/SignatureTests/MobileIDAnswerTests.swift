import Crypto
import Foundation
@testable import Signing
import XCTest

/// Every answer of spec/mobile-id.md §4-§7 the simulator does not produce on its own (legacy and
/// unknown codes, HTTP statuses per call, broken members) ends in its one sentence.
final class MobileIDAnswerTests: XCTestCase {
    func answer(_ json: [String: Any], status: Int = 200) -> JSONService.Answer {
        JSONService.Answer(status: status, json: json, body: Array((try? JSONSerialization.data(withJSONObject: json)) ?? Data()))
    }

    func status(_ json: [String: Any]) throws -> MobileIDSessionStatus { try MobileIDSessionStatus(answer(json)) }

    func assertSentence(_ expected: String, _ body: () throws -> Any, line: UInt = #line) {
        XCTAssertThrowsError(try body(), line: line) { XCTAssertEqual("\($0)", expected, line: line) }
    }

    func testEveryResultCodeHasItsSentence() {
        let sentences = [
            "TIMEOUT": "Mobile-ID: the request expired on the phone before it was confirmed; try again",
            "EXPIRED_TRANSACTION": "Mobile-ID: the request expired on the phone before it was confirmed; try again",
            "NOT_MID_CLIENT": "Mobile-ID: this phone number and personal code are not an active Mobile-ID user",
            "USER_CANCELLED": "Mobile-ID: signing was cancelled on the phone",
            "PHONE_ABSENT": "Mobile-ID: the phone is not reachable (switched off or out of coverage); try again",
            "DELIVERY_ERROR": "Mobile-ID: could not deliver the request to the phone; try again",
            "SIM_ERROR": "Mobile-ID: SIM card error; try again",
            "MID_NOT_READY": "Mobile-ID: technical error: the session ended with 'MID_NOT_READY'",
            "ERROR": "Mobile-ID: technical error: the session ended with 'ERROR'",
            "SOMETHING_NEW\n": "Mobile-ID: technical error: the session ended with 'SOMETHING_NEW '",
        ]
        for (code, sentence) in sentences {
            XCTAssertEqual(MobileIDFailure.result(code).description, sentence)
        }
        XCTAssertTrue(MobileIDFailure.result("SIGNATURE_HASH_MISMATCH").description.hasPrefix(
            "Mobile-ID failed: the SIM's Mobile-ID configuration differs from the service's; contact your mobile operator"))
    }

    func testSessionStatusesAreReadStrictly() throws {
        guard case .running = try status(["state": "RUNNING", "result": "", "time": "x", "traceId": "1"]) else {
            return XCTFail("RUNNING (with the Java fixture's empty result)")
        }
        guard case .complete("USER_CANCELLED", nil) = try status(["state": "COMPLETE", "result": "USER_CANCELLED"]) else {
            return XCTFail("USER_CANCELLED")
        }
        guard case .complete("OK", let signature?) = try status(["state": "COMPLETE", "result": "OK", "newMember": [1, 2],
                                                                 "signature": ["value": "AAEC", "algorithm": "SHA384WithRSAEncryption"]]) else {
            return XCTFail("OK")
        }
        XCTAssertEqual(signature.value, [0, 1, 2])
        XCTAssertEqual(signature.digest, .sha384)
        XCTAssertFalse(signature.isEC)
        XCTAssertTrue(signature.matches(SignatureAlgorithm(.rsaPKCS1, .sha384)))
        XCTAssertFalse(signature.matches(SignatureAlgorithm(.rsaPKCS1, .sha256)))
        XCTAssertFalse(signature.matches(SignatureAlgorithm(.ecdsa, .sha384)))
        XCTAssertFalse(signature.matches(SignatureAlgorithm(.rsaPSS, .sha384)))

        let unreadable = "Mobile-ID answered something asicfs cannot read "
        assertSentence(unreadable + "(a completed session without a result)") { try self.status(["state": "COMPLETE"]) }
        assertSentence(unreadable + "(a completed session without a result)") { try self.status(["state": "COMPLETE", "result": ""]) }
        assertSentence(unreadable + "(a session status without a state)") { try self.status(["result": "OK"]) }
        assertSentence(unreadable + "(a session in state 'PAUSED')") { try self.status(["state": "PAUSED"]) }
        assertSentence(unreadable + "(a completed session without its signature)") { try self.status(["state": "COMPLETE", "result": "OK"]) }
        assertSentence(unreadable + "(a signature value that is not Base64)") {
            try self.status(["state": "COMPLETE", "result": "OK", "signature": ["value": "*", "algorithm": "SHA256WithECEncryption"]])
        }
        assertSentence(unreadable + "(a signature algorithm asicfs does not know: 'SHA1WithECEncryption')") {
            try self.status(["state": "COMPLETE", "result": "OK", "signature": ["value": "AAEC", "algorithm": "SHA1WithECEncryption"]])
        }
        assertSentence(unreadable + "(the answer is not a JSON object)") {
            try MobileIDSessionStatus(JSONService.Answer(status: 200, json: [:], body: Array("<html>".utf8)))
        }
    }

    func testStartAndCertificateAnswers() throws {
        XCTAssertEqual(try MobileIDSessionStart(answer(["sessionID": "de305d54-75b4-431b-adb2-eb6b9e546015"])).sessionID,
                       "de305d54-75b4-431b-adb2-eb6b9e546015")
        XCTAssertEqual(try MobileIDSessionStart(answer(["sessionId": "legacy-spelling"])).sessionID, "legacy-spelling")
        assertSentence("Mobile-ID answered something asicfs cannot read (a signing answer without a usable sessionID)") {
            try MobileIDSessionStart(self.answer(["sessionID": "../../certificate?x"]))
        }
        assertSentence("Mobile-ID answered something asicfs cannot read (a signing answer without a usable sessionID)") {
            try MobileIDSessionStart(self.answer(["session": "x"]))
        }
        guard case .notFound = try MobileIDCertificateAnswer(answer(["result": "NOT_FOUND", "cert": ""])).result,
              case .notFound = try MobileIDCertificateAnswer(answer(["result": "NOT_ACTIVE"])).result else {
            return XCTFail("NOT_FOUND and NOT_ACTIVE are both 'not a user'")
        }
        assertSentence("Mobile-ID answered something asicfs cannot read (a certificate answer whose cert is not an X.509 certificate)") {
            try MobileIDCertificateAnswer(self.answer(["result": "OK", "cert": "AAEC"]))
        }
        assertSentence("Mobile-ID answered something asicfs cannot read (a certificate answer without a result)") {
            try MobileIDCertificateAnswer(self.answer(["cert": "AAEC"]))
        }
        assertSentence("Mobile-ID: technical error: the certificate request ended with 'MAYBE'") {
            try MobileIDCertificateAnswer(self.answer(["result": "MAYBE"]))
        }
    }

    func testEveryHTTPStatusHasItsSentence() {
        let url = "https://mid.example/mid-api"
        func sentence(_ status: Int, _ call: MobileIDFailure.Call, _ error: String? = nil) -> String {
            MobileIDFailure.http(answer(error.map { ["error": $0, "time": "t", "traceId": "1"] } ?? [:], status: status), call: call, url: url).description
        }
        XCTAssertEqual(sentence(400, .certificate, "nationalIdentityNumber cannot be null."),
                       "Mobile-ID refused the request as malformed (HTTP 400: nationalIdentityNumber cannot be null.)")
        XCTAssertEqual(sentence(400, .signature, "phoneNumber must contain of + and numbers(8-30)"),
                       "Mobile-ID refused the phone number: include the country code (HTTP 400: phoneNumber must contain of + and numbers(8-30))")
        XCTAssertEqual(sentence(400, .signature, "The length of the hash must match the type of hash"),
                       "Mobile-ID refused the request as malformed (HTTP 400: The length of the hash must match the type of hash)")
        XCTAssertEqual(sentence(400, .session, "Required sessionId is missing"),
                       "Mobile-ID refused the status request as malformed (HTTP 400: Required sessionId is missing)")
        XCTAssertEqual(sentence(401, .signature, "Failed to authorize user"),
                       "Mobile-ID did not accept this relying party (HTTP 401: Failed to authorize user): check mobile-id.relying-party-name and mobile-id.relying-party-uuid")
        XCTAssertEqual(sentence(401, .session, "Failed to authorize user"),
                       "Mobile-ID refused the status request of this session (HTTP 401: Failed to authorize user)")
        XCTAssertEqual(sentence(404, .session, "SessionID not found"),
                       "Mobile-ID no longer knows this signing session (HTTP 404; sessions expire after 5 minutes): start the signing again")
        XCTAssertEqual(sentence(404, .certificate), "Mobile-ID does not offer this request at \(url) (HTTP 404): check mobile-id.url")
        XCTAssertEqual(sentence(405, .signature, "Method Not Allowed"), "Mobile-ID does not offer this request at \(url) (HTTP 405): check mobile-id.url")
        XCTAssertEqual(sentence(500, .session, "Internal error"), "Mobile-ID had an internal error (HTTP 500: Internal error): start the signing again later")
        XCTAssertEqual(sentence(503, .certificate), "Mobile-ID is unavailable (HTTP 503): try again later")
        XCTAssertEqual(sentence(418, .certificate, String(repeating: "x", count: 300)),
                       "Mobile-ID answered HTTP 418: " + String(repeating: "x", count: 120) + "…")
    }
}

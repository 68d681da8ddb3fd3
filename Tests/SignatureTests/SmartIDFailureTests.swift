import Foundation
import HTTP
@testable import Signing
import TestTools
import XCTest

/// Every way a Smart-ID signing can end without a signature: one sentence each, and the
/// container byte for byte as it was. The accounts are the simulator's (contrib/simulators/README.md).
final class SmartIDFailureTests: SmartIDTestCase {
    static let refused = "Smart-ID: signing was cancelled in the Smart-ID app"

    func testEveryEndResultHasItsSentence() throws {
        let cases: [(code: String, message: String)] = [
            ("30403039917", Self.refused),  // USER_REFUSED
            ("30403039928", Self.refused),  // USER_REFUSED_DISPLAYTEXTANDPIN
            ("30403039939", Self.refused),  // USER_REFUSED_VC_CHOICE
            ("30403039946", Self.refused),  // USER_REFUSED_CONFIRMATIONMESSAGE
            ("30403039950", Self.refused),  // USER_REFUSED_CONFIRMATIONMESSAGE_WITH_VC_CHOICE
            ("30403039961", Self.refused),  // USER_REFUSED_CERT_CHOICE (at the certificate choice)
            ("30403039972", "Smart-ID: a wrong verification code was chosen in the Smart-ID app; signing aborted"),
            ("30403039983", "Smart-ID: the request expired before it was confirmed in the Smart-ID app; try again"),
            ("50001010017", "Smart-ID: this Smart-ID account cannot be used for the request; check the Smart-ID app "
                + "or contact Smart-ID support"),
            ("50001010028", "Smart-ID: the Smart-ID app is too old to show this request; update the Smart-ID app"),
            ("50001010148", "Smart-ID: the session ended with 'ACCOUNT_UNUSABLE', a result asicfs does not know"),
        ]
        for (code, message) in cases {
            try expectFailure("country=EE idcode=\(code)", message)
        }
    }

    func testEveryHTTPStatusHasItsSentence() throws {
        let cases: [(code: String, message: String)] = [
            ("50001010083", "Smart-ID: the service refused the request as malformed (HTTP 400); this is a bug in asicfs, please report it"),
            ("50001010094", "Smart-ID: the relying party is not allowed to make this request (HTTP 403): check the Smart-ID "
                + "access settings (smart-id.relying-party-uuid, smart-id.relying-party-name)"),
            ("50001010192", "Smart-ID: no Smart-ID account was found for this person or document number"),  // 404
            ("50001010040", "Smart-ID: this person has no qualified Smart-ID account; a qualified Smart-ID account is needed to sign"),
            ("50001010050", "Smart-ID: open the Smart-ID app or the Smart-ID self-service portal and follow its instructions, then try again"),
            ("50001010061", "Smart-ID: the service no longer supports the API version asicfs uses (HTTP 480); asicfs needs an update"),
            ("50001010072", "Smart-ID: the service is under maintenance (HTTP 580); try again later"),
            ("50001010170", "Smart-ID: the service failed with an internal error (HTTP 500); try again later"),
            ("50001010181", "Smart-ID: the Smart-ID session is unknown or has expired; try again"),  // 404 on the status
        ]
        for (code, message) in cases {
            try expectFailure("country=EE idcode=\(code)", message)
        }
        try expectFailure("document=PNOEE-30303039914-NONE-Q",
                          "Smart-ID: no Smart-ID account was found for this person or document number")
        let unauthorised = "Smart-ID: the service does not accept this relying party (HTTP 401): check "
            + "smart-id.relying-party-uuid and smart-id.relying-party-name, and that this computer's address is allowed to use them"
        try expectFailure("country=EE idcode=30303039914", unauthorised,
                          settings: ["smart-id.relying-party-uuid=00000000-0000-0000-0000-000000000000"])
        try expectFailure("country=EE idcode=30303039914", unauthorised, settings: ["smart-id.relying-party-name=Somebody"])
    }

    func testAnAdvancedCertificateIsRefused() throws {
        try expectFailure("country=EE idcode=50001010104", "Smart-ID: the account's certificate is of ADVANCED level "
            + "(Smart-ID Basic); a qualified Smart-ID account is needed to sign")
    }

    func testAnswersThatBreakTheProtocolAreRefused() throws {
        try expectFailure("country=EE idcode=50001010126", "Smart-ID: the service's answer about the session is not JSON")
        try expectFailure("country=EE idcode=50001010137", "Smart-ID: the service's answer lacks result.documentNumber")
        try expectFailure("country=EE idcode=50001010159",
                          "Smart-ID: the service signed with 'sha512WithRSAEncryption', not the sha256WithRSAEncryption asked for")
        try expectFailure("country=EE idcode=50001010167",
                          "the signature value returned by smart-id does not verify with the signer's certificate")
    }

    func testAnotherPinnedCertificateIsRefusedBeforeAnythingIsSent() throws {
        let start = simulator.requests().count
        let message = try XCTUnwrap(captureFailure("country=EE idcode=30303039914", settings: ["smart-id.tls-cert=\(pki.root)"]))
        XCTAssertTrue(message.hasPrefix("Smart-ID: TLS certificate of 127.0.0.1 is not the pinned one"), message)
        XCTAssertEqual(simulator.requests().count, start, "a request reached the service")

        XCTAssertThrowsError(try signer("country=EE idcode=30303039914", settings: ["smart-id.tls-cert="])) {
            XCTAssertTrue("\($0)".hasPrefix("Smart-ID: no TLS certificate to pin is configured"), "\($0)")
        }
    }

    /// The user never answers: the signing ends after smart-id.timeout, with long polls (not a
    /// busy loop) meanwhile.
    func testAnUnansweredRequestTimesOutAfterTheConfiguredTime() throws {
        let container = try newContainer()
        let before = try Data(contentsOf: URL(fileURLWithPath: container.path))
        var codeShown: Date?
        let start = simulator.requests().count
        XCTAssertThrowsError(try sign(container, "country=EE idcode=50001010115", settings: ["smart-id.timeout=2"]) { event in
            if case .verificationCode = event { codeShown = Date() }
        }) {
            XCTAssertEqual("\($0)", "Smart-ID: the user did not confirm within 2 s")
        }
        let waited = Date().timeIntervalSince(try XCTUnwrap(codeShown))
        XCTAssertGreaterThanOrEqual(waited, 2.0)
        XCTAssertLessThan(waited, 3.5)
        let polls = requests(from: start).filter { $0["kind"] as? String == "session" }
        XCTAssertLessThanOrEqual(polls.count, 4, "\(polls)")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: container.path)), before)
    }

    func testCancellingWhileWaitingForTheUserStopsWithinASecond() throws {
        let container = try newContainer()
        let before = try Data(contentsOf: URL(fileURLWithPath: container.path))
        let cancellation = Cancellation()
        let cancelled = Cancelled()
        XCTAssertThrowsError(try sign(container, "country=EE idcode=50001010115", settings: ["smart-id.timeout=60"],
                                      cancellation: cancellation) { event in
            guard case .verificationCode = event else { return }
            // Cancel while the signature session is being polled, as `echo cancel > sign/smart-id` does.
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: 0.6)
                cancelled.mark()
                cancellation.cancel()
            }
        }) {
            XCTAssertEqual("\($0)", "the signing was cancelled; the container is unchanged")
        }
        let stoppedAfter = Date().timeIntervalSince(try XCTUnwrap(cancelled.time))
        XCTAssertLessThan(stoppedAfter, 1.5)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: container.path)), before)
    }

    func captureFailure(_ parameters: String, settings: [String]) -> String? {
        do {
            _ = try sign(try newContainer(), parameters, settings: settings)
            return nil
        } catch {
            return "\(error)"
        }
    }
}

/// When the cancelling thread cancelled.
private final class Cancelled: @unchecked Sendable {
    private let lock = NSLock()
    private var marked: Date?
    func mark() { lock.withLock { marked = Date() } }
    var time: Date? { lock.withLock { marked } }
}

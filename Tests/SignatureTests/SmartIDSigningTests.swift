import ASiC
import Configuration
import Crypto
import Foundation
import HTTP
@testable import Signing
import TestTools
import Validation
import XCTest

/// What every Smart-ID test class shares: a test PKI with its loopback TSA and OCSP, the Smart-ID
/// simulator over real HTTPS (pinned to its certificate), and helpers to sign through
/// `SigningSession` with the settings a user would write.
class SmartIDTestCase: XCTestCase {
    nonisolated(unsafe) static var shared: SharedSmartIDServices!

    override class func setUp() { shared = SharedSmartIDServices(label: "\(self)") }
    override class func tearDown() { shared.stop() }

    override func setUpWithError() throws {
        // A service that did not start fails every test, with the reason.
        if let failure = Self.shared.failure { throw ShellError(failure) }
    }

    var simulator: SmartIDSimulator { Self.shared.simulator! }
    var services: TestServices { Self.shared.services! }
    var pki: TestPKI { services.pki }

    /// The settings of a user of this simulator, then `extra` (later ones win). Smart-ID sends
    /// no chain with the certificate (the trusted list supplies the CA in real use), so the test
    /// PKI's issuing CA is a trust anchor here besides its root.
    func environment(_ extra: [String] = []) throws -> SignatureEnvironment {
        let configuration = try Configuration.load(explicitPath: "/dev/null", overrides: [
            "tsa-url=\(services.tsaURL)", "tsl=none", "trust-anchors=\(pki.chain)", "cache-dir=\(Self.shared.folder)/cache",
            "smart-id.url=\(simulator.url)", "smart-id.tls-cert=\(simulator.tlsCertificate)",
        ] + extra)
        return try SignatureEnvironment(configuration: configuration)
    }

    func newContainer() throws -> Container {
        let path = Self.shared.folder + "/c-\(UUID().uuidString.prefix(8)).asice"
        return try Container.create(at: path, files: [NewDataFile(bytes: Array("contract\n".utf8), name: "contract.txt")])
    }

    /// The signer as the mount makes it, with a short pause after the code to keep tests quick.
    func signer(_ parameters: String, settings: [String] = [], cancellation: Cancellation = Cancellation()) throws -> SmartIDSigner {
        let request = try SmartIDRequest(try SigningMethod.smartID.parse(parameters))
        let context = SignerContext(environment: try environment(settings), cancellation: cancellation)
        return try SmartIDSigner(request: request, context: context, pauseAfterCode: 0.05)
    }

    func sign(_ container: Container, _ parameters: String, settings: [String] = [],
              cancellation: Cancellation = Cancellation(), events: (SigningEvent) -> Void = { _ in }) throws -> SigningOutcome {
        let signer = try signer(parameters, settings: settings, cancellation: cancellation)
        return try SigningSession(container: container, signer: signer, environment: try environment(settings),
                                  cancellation: cancellation).run(events: events)
    }

    /// Signing fails with exactly `message`, and the container is byte for byte as it was.
    func expectFailure(_ parameters: String, _ message: String, settings: [String] = [],
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let container = try newContainer()
        let before = try Data(contentsOf: URL(fileURLWithPath: container.path))
        XCTAssertThrowsError(try sign(container, parameters, settings: settings), parameters, file: file, line: line) {
            XCTAssertEqual("\($0)", message, parameters, file: file, line: line)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: container.path)), before,
                       "\(parameters): the container changed", file: file, line: line)
    }

    /// The simulator's log lines from `index` on.
    func requests(from index: Int = 0) -> [[String: Any]] { Array(simulator.requests().dropFirst(index)) }
}

/// Signing end to end with the Smart-ID simulator: certificate choice, verification code, the
/// signature by document number, time-stamp and OCSP, and a container that validates.
final class SmartIDSigningTests: SmartIDTestCase {
    func testSigningByPersonalCodeOnThePINScreenValidates() throws {
        let container = try newContainer()
        let start = simulator.requests().count
        var events: [SigningEvent] = []
        var signatureRequestsWhenCodeShown: Int?
        // The public way in, as the mount and the command line take it.
        let parameters = try SigningMethod.smartID.parse("country=EE idcode=30303039914 display=pin")
        let environment = try environment()
        let signer = try SigningMethod.smartID.signer(parameters, context: SignerContext(environment: environment, cancellation: Cancellation()))
        let outcome = try SigningSession(container: container, signer: signer, environment: environment,
                                         details: parameters.signerDetails).run { event in
            events.append(event)
            if case .verificationCode = event {
                signatureRequestsWhenCodeShown = requests(from: start).filter { $0["kind"] as? String == "signature" }.count
            }
        }
        XCTAssertEqual(outcome.report.verdict, .valid, outcome.report.text)

        let reopened = try Container.open(container.path)
        let report = environment.validator().validate(reopened)
        XCTAssertEqual(report.verdict, .valid, report.text)
        XCTAssertEqual(report.signatures.first?.signerName, "TESTNUMBER,OK")
        XCTAssertEqual(report.signatures.first?.qualification, "QES")
        XCTAssertEqual(report.signatures.first?.signatureMethod, "RSA with SHA-256")
        XCTAssertEqual(report.signatures.first?.personalCode, "PNOEE-30303039914")

        // The code was shown before the signature request left, and it is the code of the hash sent.
        XCTAssertEqual(signatureRequestsWhenCodeShown, 0)
        let log = requests(from: start)
        XCTAssertEqual(log.map { $0["kind"] as? String }, ["certificatechoice", "session", "signature", "session"])
        XCTAssertEqual(log[0]["reference"] as? String, "etsi/PNOEE-30303039914")
        let signatureRequest = log[2]
        XCTAssertEqual(signatureRequest["reference"] as? String, "document/PNOEE-30303039914-MOCK-Q")
        XCTAssertEqual(signatureRequest["interactions"] as? [String], ["displayTextAndPIN"])
        let shown = events.compactMap { event -> String? in if case .verificationCode(let code) = event { code } else { nil } }
        XCTAssertEqual(shown, [try XCTUnwrap(signatureRequest["verificationCode"] as? String)])
        let codeIndex = try XCTUnwrap(events.firstIndex { if case .verificationCode = $0 { true } else { false } })
        guard case .waitingForUser(let what) = events[codeIndex + 1] else { return XCTFail("\(events)") }
        XCTAssertTrue(what.contains(shown[0]), what)
    }

    func testSigningByDocumentNumberOnTheConfirmationScreenValidates() throws {
        let container = try newContainer()
        let start = simulator.requests().count
        let outcome = try sign(container, "document=PNOEE-30303039914-MOCK-Q display=confirmation message='Leping nr 7, ära unusta'")
        XCTAssertEqual(outcome.report.verdict, .valid, outcome.report.text)
        let report = try environment().validator().validate(try Container.open(container.path))
        XCTAssertEqual(report.verdict, .valid, report.text)

        let log = requests(from: start)
        XCTAssertEqual(log[0]["reference"] as? String, "document/PNOEE-30303039914-MOCK-Q")
        let signatureRequest = try XCTUnwrap(log.first { $0["kind"] as? String == "signature" })
        XCTAssertEqual(signatureRequest["interactions"] as? [String], ["confirmationMessage", "displayTextAndPIN"])
        XCTAssertEqual(log.last?["interactionFlowUsed"] as? String, "confirmationMessage")
    }

    func testLatvianAndLithuanianAccountsSign() throws {
        let start = simulator.requests().count
        let latvian = try sign(try newContainer(), "country=LV idcode=03030310012")
        XCTAssertEqual(latvian.report.verdict, .valid, latvian.report.text)
        XCTAssertEqual(latvian.report.signerName, "TESTNUMBER,OK")
        let lithuanian = try sign(try newContainer(), "country=lt idcode=30303039914 display=confirmation")
        XCTAssertEqual(lithuanian.report.verdict, .valid, lithuanian.report.text)
        let references = requests(from: start).compactMap { $0["reference"] as? String }
        XCTAssertEqual(references, ["etsi/PNOLV-030303-10012", "document/PNOLV-030303-10012-MOCK-Q",
                                    "etsi/PNOLT-30303039914", "document/PNOLT-30303039914-MOCK-Q"])
    }

    /// An app without the confirmation screen gets the PIN screen, the second interaction asked for.
    func testAnAppWithoutTheConfirmationScreenFallsBackToThePINScreen() throws {
        let start = simulator.requests().count
        let outcome = try sign(try newContainer(), "country=EE idcode=50001010039 display=confirmation")
        XCTAssertEqual(outcome.report.verdict, .valid, outcome.report.text)
        XCTAssertEqual(requests(from: start).last?["interactionFlowUsed"] as? String, "displayTextAndPIN")
    }
}

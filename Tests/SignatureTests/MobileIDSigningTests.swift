import ASiC
import Configuration
import Crypto
import Foundation
import HTTP
import Signing
import TestTools
import Validation
import XCTest

/// Mobile-ID signing end to end against the simulator (real HTTPS with a pinned certificate), the
/// loopback TSA and OCSP, and validation with the test PKI's root as the only trust anchor.
final class MobileIDSigningTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    nonisolated(unsafe) static var simulator: MobileIDSimulator?
    nonisolated(unsafe) static var simulatorFailure: String?
    static let relyingPartyUUID = "5e6f8a10-1b2c-4d3e-8f90-a1b2c3d4e5f6"

    override class func setUp() {
        shared = SharedTestServices(label: "mobile-id")
        guard let services = shared.services else { return }
        do {
            simulator = try MobileIDSimulator.start(pki: services.pki, folder: shared.folder + "/mid",
                                                    extra: ["--rp-uuid", relyingPartyUUID, "--rp-name", "asicfs test"])
        } catch {
            simulatorFailure = "\(error)"
        }
    }

    override class func tearDown() {
        simulator?.stop()
        shared.stop()
    }

    var services: TestServices { get throws { try XCTUnwrap(Self.shared.services, Self.shared.failure ?? "") } }
    var simulator: MobileIDSimulator { get throws { try XCTUnwrap(Self.simulator, Self.simulatorFailure ?? "") } }

    func environment(_ extra: [String] = []) throws -> SignatureEnvironment {
        let configuration = try Configuration.load(explicitPath: "/dev/null", overrides: [
            // MID-REST returns the signer's certificate without its issuer: in production the trusted list
            // supplies the issuing CA; here the test PKI's chain (issuing CA and root) does.
            "tsa-url=\(try services.tsaURL)", "tsl=none", "trust-anchors=\(try services.pki.chain)",
            "cache-dir=\(Self.shared.folder)/cache", "mobile-id.url=\(try simulator.url)",
            "mobile-id.tls-cert=\(try simulator.tlsCertificate)",
        ] + extra)
        return try SignatureEnvironment(configuration: configuration)
    }

    func newContainer() throws -> Container {
        let path = Self.shared.folder + "/c-\(UUID().uuidString.prefix(8)).asice"
        return try Container.create(at: path, files: [NewDataFile(bytes: Array("the contract\n".utf8), name: "contract.txt"),
                                                      NewDataFile(bytes: textLikeBytes(count: 50_000), name: "annex.bin")])
    }

    /// Signs `container` with `phone=… idcode=… <more>` through `SigningMethod` and `SigningSession`,
    /// as the filesystem and the command line do; `onEvent` sees each event as it happens.
    func sign(_ container: Container, _ number: (String, String), _ more: String = "", settings: [String] = [],
              cancellation: Cancellation = Cancellation(), onEvent: (SigningEvent) -> Void = { _ in }) throws -> SigningOutcome {
        let parameters = try SigningMethod.mobileID.parse("phone=\(number.0) idcode=\(number.1) \(more)")
        let environment = try environment(settings)
        let signer = try SigningMethod.mobileID.signer(parameters, context: SignerContext(environment: environment,
                                                                                           cancellation: cancellation))
        return try SigningSession(container: container, signer: signer, environment: environment,
                                  details: parameters.signerDetails, cancellation: cancellation).run(events: onEvent)
    }

    /// Signs with `number` and checks the outcome: VALID when reopened, the expected algorithm,
    /// the verification code shown before the request was sent and matching the hash sent.
    func assertSignsValid(_ number: (String, String), _ more: String = "", signatureMethod: String, hashType: String,
                          signer: String) throws -> [String: Any] {
        let simulator = try simulator
        let container = try newContainer()
        var events: [SigningEvent] = []
        var requestsWhenCodeShown: [String]? = nil
        let earlier = simulator.requests().count
        let outcome = try sign(container, number, more) { event in
            if case .verificationCode = event { requestsWhenCodeShown = Array(simulator.requestLines().dropFirst(earlier)) }
            events.append(event)
        }
        XCTAssertEqual(outcome.report.verdict, .valid, outcome.report.text)

        let reopened = try Container.open(container.path)
        let report = try environment().validator().validate(reopened)
        XCTAssertEqual(report.verdict, .valid, report.text)
        let signature = try XCTUnwrap(report.signatures.first)
        XCTAssertEqual(signature.signerName, signer)
        XCTAssertEqual(signature.profile, "BES/time-stamp")
        XCTAssertEqual(Set(signature.signedFiles), ["contract.txt", "annex.bin"])
        let xml = String(decoding: try reopened.signatureBytes(reopened.signatureFiles[0]), as: UTF8.self)
        XCTAssertTrue(xml.contains("<ds:SignatureMethod Algorithm=\"\(signatureMethod)\">"), xml)

        // The code came first, while the simulator had seen the certificate request but no signing request.
        let shown = try XCTUnwrap(requestsWhenCodeShown, "a verification code event arrived")
        XCTAssertEqual(shown, ["POST /certificate"], "the code was shown before the signing request was sent")
        let request = try XCTUnwrap(simulator.requests().last { $0["path"] as? String == "/signature" && $0["phoneNumber"] as? String == number.0 })
        XCTAssertEqual(request["hashType"] as? String, hashType)
        let hash = try XCTUnwrap(Data(base64Encoded: request["hash"] as? String ?? ""))
        let code = try XCTUnwrap(MobileIDVerificationCode.compute(Array(hash)))
        XCTAssertTrue(events.contains(.verificationCode(code)), "\(events)")
        let codeIndex = try XCTUnwrap(events.firstIndex(of: .verificationCode(code)))
        let waitingIndex = try XCTUnwrap(events.firstIndex { if case .waitingForUser(let text) = $0 { text.contains(code) } else { false } })
        XCTAssertLessThan(codeIndex, waitingIndex, "\(events)")
        XCTAssertTrue(events.contains(.waitingForUser("confirm on the phone \(number.0) with PIN2 if it shows the verification code \(code) (waiting up to 150 s)")), "\(events)")
        return request
    }

    func testECIdentitySignsValid() throws {
        let request = try assertSignsValid(MobileIDSimulator.Number.ecOK, signatureMethod: "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
                                           hashType: "SHA256", signer: "O'CONNEŽ-ŠUSLIK TESTNUMBER,MARY ÄNN,60001019906")
        XCTAssertEqual(request["language"] as? String, "EST")
        XCTAssertNil(request["displayText"], "no message, no display text")
        XCTAssertEqual(request["relyingPartyName"] as? String, "DEMO")
    }

    func testRSAIdentitySignsValid() throws {
        let request = try assertSignsValid(MobileIDSimulator.Number.rsaOK, "language=ENG message='Contract Nr 5'",
                                           signatureMethod: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
                                           hashType: "SHA256", signer: "TESTNUMBER,RSA,39901019992")
        XCTAssertEqual(request["language"] as? String, "ENG")
        XCTAssertEqual(request["displayText"] as? String, "Contract Nr 5")
        XCTAssertEqual(request["displayTextFormat"] as? String, "GSM-7")
    }

    func testLithuanianP384IdentitySignsValidWithSHA384() throws {
        let request = try assertSignsValid(MobileIDSimulator.Number.lithuanianOK, "message='Pasirašyti sutartį'",
                                           signatureMethod: "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384",
                                           hashType: "SHA384", signer: "TESTNUMBER,LITHUANIAN,50001018865")
        XCTAssertEqual(request["language"] as? String, "LIT")
        XCTAssertEqual(request["displayTextFormat"] as? String, "UCS-2")
    }

    /// Each end of a session other than OK is one sentence, and the container stays byte for byte.
    func testEveryFailureIsOneSentenceAndLeavesTheContainerUnchanged() throws {
        let container = try newContainer()
        let before = try Data(contentsOf: URL(fileURLWithPath: container.path))
        let number = MobileIDSimulator.Number.self
        let cases: [((String, String), String, Bool)] = [
            (number.notMIDClient, "Mobile-ID: +37200000266 with this personal code is not a Mobile-ID user (no active Mobile-ID certificate)", false),
            (("+37200000001", "38001019015"), "Mobile-ID: +37200000001 with this personal code is not a Mobile-ID user (no active Mobile-ID certificate)", false),
            (number.deliveryError, "Mobile-ID: could not deliver the request to the phone; try again", true),
            (number.userCancelled, "Mobile-ID: signing was cancelled on the phone", true),
            (number.hashMismatch, "Mobile-ID failed: the SIM's Mobile-ID configuration differs from the service's; contact your mobile operator "
                + "(demo numbers: re-register the test certificate at https://demo.sk.ee/MIDCertsReg/)", true),
            (number.simError, "Mobile-ID: SIM card error; try again", true),
            (number.phoneAbsent, "Mobile-ID: the phone is not reachable (switched off or out of coverage); try again", true),
            (number.timeout, "Mobile-ID: the request expired on the phone before it was confirmed; try again", true),
            (number.malformedJSON, "Mobile-ID answered something asicfs cannot read (the answer is not a JSON object)", true),
            (number.internalError, "Mobile-ID had an internal error (HTTP 500: Internal error): start the signing again later", true),
            (number.wrongSignature, "the signature value returned by mobile-id does not verify with the signer's certificate", true),
            (number.wrongAlgorithm, "Mobile-ID signed with SHA256WithRSAEncryption, but the certificate's key calls for ECDSA with SHA-256; the value cannot be used", true),
        ]
        for (phone, sentence, reachesSigning) in cases {
            var codes: [String] = []
            XCTAssertThrowsError(try sign(container, phone) { if case .verificationCode(let code) = $0 { codes.append(code) } }) { error in
                XCTAssertTrue(error is SigningError, "\(type(of: error))")
                XCTAssertEqual("\(error)", sentence)
            }
            XCTAssertEqual(codes.count, reachesSigning ? 1 : 0, "\(phone): \(codes)")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: container.path)), before, sentence)
        }
    }

    func testServiceThatNeverEndsTheSessionTimesOutAtTheConfiguredTime() throws {
        let container = try newContainer()
        let started = Date()
        let simulator = try simulator
        XCTAssertThrowsError(try sign(container, MobileIDSimulator.Number.runsForever, settings: ["mobile-id.timeout=2"])) {
            XCTAssertEqual("\($0)", "Mobile-ID: the user did not confirm within 2 s")
        }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThan(elapsed, 1.7)
        XCTAssertLessThan(elapsed, 4.5)
        // Each long poll waits at most the time left (and at least the service's minimum, 1 s).
        let polls = simulator.requests().filter {
            ($0["path"] as? String ?? "").hasPrefix("/signature/session/") && ($0["time"] as? Double ?? 0) >= started.timeIntervalSince1970
        }
        XCTAssertFalse(polls.isEmpty)
        for poll in polls {
            let wait = try XCTUnwrap(Int(poll["timeoutMs"] as? String ?? ""))
            XCTAssertLessThanOrEqual(wait, 2000)
            XCTAssertGreaterThanOrEqual(wait, 1000)
        }
    }

    func testHangingServiceTimesOutAtTheConfiguredTime() throws {
        let container = try newContainer()
        let before = try Data(contentsOf: URL(fileURLWithPath: container.path))
        let started = Date()
        XCTAssertThrowsError(try sign(container, MobileIDSimulator.Number.hangs, settings: ["mobile-id.timeout=2"])) {
            XCTAssertEqual("\($0)", "Mobile-ID: no answer about the signing within 2 s (mobile-id.timeout); the service stopped responding")
        }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThan(elapsed, 2)
        XCTAssertLessThan(elapsed, 4.5, "the overall limit, not the 30 s of a single request")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: container.path)), before)
    }

    func testCancellingWhilePollingStopsQuickly() throws {
        for number in [MobileIDSimulator.Number.hangs, MobileIDSimulator.Number.runsForever] {
            let container = try newContainer()
            let cancellation = Cancellation()
            var cancelledAt: Date? = nil
            XCTAssertThrowsError(try sign(container, number, cancellation: cancellation) { event in
                // Cancel from another thread once the phone is being asked, as `rm` of a status file would.
                if case .waitingForUser = event {
                    DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { cancellation.cancel() }
                    cancelledAt = Date().addingTimeInterval(0.5)
                }
            }) {
                XCTAssertEqual("\($0)", "the signing was cancelled; the container is unchanged")
            }
            let late = Date().timeIntervalSince(try XCTUnwrap(cancelledAt))
            XCTAssertLessThan(late, 1.6, "stopped \(late) s after the cancellation")
        }
    }

    func testOnlyThePinnedCertificateIsAccepted() throws {
        let simulator = try simulator
        // Another certificate with the very same names (a man in the middle's): refused before any request.
        let other = Self.shared.folder + "/other-tls.pem"
        let made = try Shell.run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                             "-keyout", Self.shared.folder + "/other-tls.key", "-out", other, "-days", "30",
                                             "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        XCTAssertEqual(made.status, 0, made.stderr)
        let container = try newContainer()
        let seen = simulator.requests().count
        XCTAssertThrowsError(try sign(container, MobileIDSimulator.Number.ecOK, settings: ["mobile-id.tls-cert=\(other)"])) {
            XCTAssertTrue("\($0)".hasPrefix("Mobile-ID: TLS certificate of 127.0.0.1 is not the pinned one"), "\($0)")
        }
        XCTAssertEqual(simulator.requests().count, seen, "no request reached the simulator")

        // No pinned certificate at all: refused before connecting.
        let configuration = try Configuration.load(explicitPath: "/dev/null", overrides: ["mobile-id.url=\(simulator.url)"])
        let context = SignerContext(environment: try SignatureEnvironment(configuration: configuration), cancellation: Cancellation())
        XCTAssertThrowsError(try MobileIDSigner.make(try SigningMethod.mobileID.parse("phone=+37200000766 idcode=60001019906"),
                                                     context: context)) {
            XCTAssertTrue("\($0)".hasPrefix("Mobile-ID: no TLS certificate to pin is configured for \(simulator.url): set mobile-id.tls-cert"), "\($0)")
        }
        XCTAssertEqual(simulator.requests().count, seen)
    }

    func testRelyingPartyAndServiceSettings() throws {
        let simulator = try simulator
        func certificate(_ settings: [String]) throws -> Certificate {
            let context = SignerContext(environment: try environment(settings), cancellation: Cancellation())
            let signer = try MobileIDSigner.make(try SigningMethod.mobileID.parse("phone=+37200000766 idcode=60001019906"),
                                                 context: context)
            return try signer.certificate { _ in }
        }
        // A relying party the service knows (besides the demo one), with its name in any case.
        let mary = try certificate(["mobile-id.relying-party-uuid=\(Self.relyingPartyUUID)", "mobile-id.relying-party-name=ASICFS TEST"])
        XCTAssertEqual(mary.serialNumberAttribute, "PNOEE-60001019906")
        XCTAssertEqual(simulator.requests().last?["relyingPartyName"] as? String, "ASICFS TEST")

        XCTAssertThrowsError(try certificate(["mobile-id.relying-party-uuid=5e6f8a10-1b2c-4d3e-8f90-a1b2c3d4e5f7"])) {
            XCTAssertEqual("\($0)", "Mobile-ID did not accept this relying party (HTTP 401: Failed to authorize user): "
                + "check mobile-id.relying-party-name and mobile-id.relying-party-uuid")
        }
        XCTAssertThrowsError(try certificate(["mobile-id.relying-party-uuid=5E6F8A10-1B2C-4D3E-8F90-A1B2C3D4E5F6"])) {
            XCTAssertTrue("\($0)".hasPrefix("mobile-id.relying-party-uuid must be a UUID in lower case"), "\($0)")
        }
        let wrongURL = simulator.url.replacingOccurrences(of: "/mid-api", with: "/mid-api/v9")
        XCTAssertThrowsError(try certificate(["mobile-id.url=\(wrongURL)"])) {
            XCTAssertEqual("\($0)", "Mobile-ID does not offer this request at \(wrongURL) (HTTP 404): check mobile-id.url")
        }
    }
}

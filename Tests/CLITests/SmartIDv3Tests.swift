import Foundation
import TestTools
import XCTest

/// `asicfs sign --method smart-id` over RP API v3 against the simulator: notification signing
/// with the code the service made, QR (device-link) signing whose links change each second and
/// of which only the current one is accepted, RSASSA-PSS and PKCS#1 v1.5 signatures VALID in
/// `asicfs verify`, and every v3 end result and HTTP error as one line with the container unchanged.
final class SmartIDv3Tests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedSmartIDServices!

    override class func setUp() { shared = SharedSmartIDServices(label: "cli-smart-id-v3", confirmAfter: 0.1) }
    override class func tearDown() { shared.stop() }

    var simulator: SmartIDSimulator {
        get throws { try XCTUnwrap(Self.shared.simulator, Self.shared.failure ?? "the Smart-ID simulator") }
    }

    /// v3 is the default: the URL is the v3 one and no smart-id.api is set.
    func settings(_ extra: [String] = []) throws -> [String] {
        let services = try XCTUnwrap(Self.shared.services, Self.shared.failure ?? "services")
        return (["tsa-url=\(services.tsaURL)", "tsl=none", "trust-anchors=\(services.pki.chain)",
                 "smart-id.url=\(try simulator.urlV3)", "smart-id.tls-cert=\(try simulator.tlsCertificate)",
                 "smart-id.timeout=20", "notify=no"] + extra).flatMap { ["-o", $0] }
    }

    func container() throws -> String {
        let path = path("doc-\(UUID().uuidString.prefix(8)).asice")
        assertSuccess(try asicfs(["create", path, try write("contract.txt", "the contract\n")]))
        return path
    }

    func signatureXML(_ container: String) throws -> String {
        try runTool("/usr/bin/unzip", ["-p", container, "META-INF/signatures0.xml"]).stdout
    }

    func assertValid(_ container: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try asicfs(["verify", container] + settings())
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr, file: file, line: line)
        XCTAssertTrue(result.stdout.contains("VALID"), result.stdout, file: file, line: line)
    }

    func testNotificationSigningShowsTheServicesCodeAndWritesPSS() throws {
        let path = try container()
        let result = try asicfs(["sign", path, "--method", "smart-id", "country=EE", "idcode=30303039914"] + settings())
        assertSuccess(result)
        let signing = try XCTUnwrap(try simulator.requests().last { $0["api"] as? String == "v3" && $0["flow"] as? String == "notification" })
        let code = try XCTUnwrap(signing["vc"] as? String)
        XCTAssertTrue(result.stdout.contains("verification code: \(code) "), result.stdout)
        // The certificate choice went by notification, the signature to the chosen account's document.
        let paths = try simulator.requests().compactMap { $0["path"] as? String }.filter { $0.contains("/v3/") }
        XCTAssertTrue(paths.contains("/smart-id-rp/v3/signature/certificate-choice/notification/etsi/PNOEE-30303039914"), "\(paths)")
        XCTAssertTrue(paths.contains("/smart-id-rp/v3/signature/notification/document/PNOEE-30303039914-MOCK-Q"), "\(paths)")
        let xml = try signatureXML(path)
        XCTAssertTrue(xml.contains("http://www.w3.org/2007/05/xmldsig-more#sha256-rsa-MGF1"), xml)
        try assertValid(path)
    }

    func testDocumentNumberAndPKCS1() throws {
        let path = try container()
        let json = try asicfs(["sign", path, "--method", "smart-id", "document=PNOEE-30303039914-MOCK-Q", "--json"]
            + settings(["smart-id.signature-algorithm=pkcs1"]))
        assertSuccess(json)
        let events = try assertValidJSON(json)
        let signing = try XCTUnwrap(try simulator.requests().last { $0["flow"] as? String == "notification" })
        XCTAssertTrue(events.contains { $0["verification_code"] as? String == signing["vc"] as? String }, json.stdout)
        // A known document: its certificate at once (no certificate choice), then the notification.
        let paths = try simulator.requests().compactMap { $0["path"] as? String }
        XCTAssertTrue(paths.contains("/smart-id-rp/v3/signature/certificate/document/PNOEE-30303039914-MOCK-Q"), "\(paths)")
        let xml = try signatureXML(path)
        XCTAssertTrue(xml.contains("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"), xml)
        try assertValid(path)
    }

    func testV2StaysSelectable() throws {
        let path = try container()
        let services = try XCTUnwrap(Self.shared.services)
        let result = try asicfs(["sign", path, "--method", "smart-id", "country=EE", "idcode=30303039914",
                                 "-o", "smart-id.api=v2", "-o", "smart-id.url=\(try simulator.url)",
                                 "-o", "smart-id.tls-cert=\(try simulator.tlsCertificate)", "-o", "tsa-url=\(services.tsaURL)",
                                 "-o", "tsl=none", "-o", "trust-anchors=\(services.pki.chain)", "-o", "notify=no"])
        assertSuccess(result)
        XCTAssertTrue(try signatureXML(path).contains("xmldsig-more#rsa-sha256"))
        let qr = try asicfs(["sign", path, "--method", "smart-id", "qr=yes", "-o", "smart-id.api=v2"])
        XCTAssertEqual(qr.status, 1)
        XCTAssertTrue(qr.stderr.contains("qr=yes needs Smart-ID's RP API v3"), qr.stderr)
    }

    func testEveryV3OutcomeIsOneSentenceAndTheContainerIsUnchanged() throws {
        let outcomes: [(String, String)] = [
            ("30403039917", "signing was cancelled in the Smart-ID app"),
            ("30403039928", "cancelled in the Smart-ID app (on the displayTextAndPIN screen)"),
            ("30403039946", "cancelled in the Smart-ID app (on the confirmationMessage screen)"),
            ("30403039961", "signing was cancelled in the Smart-ID app"),
            ("30403039972", "a wrong verification code was chosen"),
            ("30403039983", "the request expired"),
            ("50001010017", "contact Smart-ID support"),
            ("50001010028", "update the Smart-ID app"),
            ("50001010040", "no Smart-ID account was found"),
            ("50001010061", "asicfs needs an update"),
            ("50001010072", "under maintenance (HTTP 580)"),
            ("50001010083", "malformed (HTTP 400)"),
            ("50001010094", "not allowed to make this request (HTTP 403)"),
            ("50001010170", "internal error (HTTP 500)"),
            ("50001010104", "ADVANCED level"),
            ("50001010126", "not JSON"),
            ("50001010148", "cannot be used at the moment"),
            ("50001010159", "parameters other than the RSASSA-PSS"),
            ("50001010167", "does not verify"),
            ("50001010181", "unknown or has expired"),
            ("50001010192", "no Smart-ID account was found"),
            ("50001010202", "PROTOCOL_FAILURE"),
            ("50001010213", "SERVER_ERROR"),
            ("50001010224", "expected the signature linked to its QR code"),
        ]
        let path = try container()
        let before = try read(path)
        for (code, words) in outcomes {
            let result = try asicfs(["sign", path, "--method", "smart-id", "country=EE", "idcode=\(code)"] + settings())
            XCTAssertEqual(result.status, 1, "\(code): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            XCTAssertEqual(lines.count, 1, "\(code): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("asicfs: "), result.stderr)
            XCTAssertTrue(result.stderr.contains(words), "\(code): '\(words)' missing in \(result.stderr)")
            XCTAssertEqual(try read(path), before, code)
        }
    }

    /// qr=yes: a new link each second (the simulator checks its authCode and elapsedSeconds and
    /// refuses one that is no longer current), then the linked signature, RSASSA-PSS, VALID.
    func testQRSigningWithLinksThatChangeEachSecond() throws {
        let path = try container()
        let started = try startTool(Self.binary, ["sign", path, "--method", "smart-id", "qr=yes", "--json"] + settings())
        defer { if started.process.isRunning { started.process.terminate() } }
        var links: [(link: String, elapsed: Int)] = []
        let deadline = Date().addingTimeInterval(30)
        while (links.last?.elapsed ?? 0) < 3, Date() < deadline, started.process.isRunning {
            let text = (try? String(contentsOf: started.stdout, encoding: .utf8)) ?? ""
            links = text.split(separator: "\n").compactMap { line in
                guard let event = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                      let link = event["device_link"] as? String, let elapsed = event["elapsed_seconds"] as? Int else { return nil }
                return (link, elapsed)
            }
            usleep(100_000)
        }
        let first = try XCTUnwrap(links.first, "no device_link event: \((try? String(contentsOf: started.stdout, encoding: .utf8)) ?? "")")
        let current = try XCTUnwrap(links.last)
        XCTAssertGreaterThanOrEqual(current.elapsed, 3)
        XCTAssertEqual(Set(links.map(\.link)).count, links.count, "every second's link differs")
        XCTAssertTrue(first.link.hasPrefix("https://smart-id.com/device-link?deviceLinkType=QR&elapsedSeconds=\(first.elapsed)&sessionToken="), first.link)
        XCTAssertTrue(current.link.contains("&sessionType=cert&version=1.0&lang=eng&authCode="), current.link)
        // The first link is seconds old now: refused. A tampered current one too.
        let stale = try simulator.scan(link: first.link, document: "PNOEE-30303039914-MOCK-Q")
        XCTAssertTrue(stale?.contains("not current") == true, stale ?? "accepted")
        let tampered = try simulator.scan(link: String(current.link.dropLast()) + (current.link.hasSuffix("A") ? "B" : "A"),
                                          document: "PNOEE-30303039914-MOCK-Q")
        XCTAssertTrue(tampered?.contains("authCode") == true, tampered ?? "accepted")
        // The newest link, read again now: it is the current one.
        let text = try String(contentsOf: started.stdout, encoding: .utf8)
        let newest = try XCTUnwrap(text.split(separator: "\n").compactMap {
            ((try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any])?["device_link"] as? String
        }.last)
        XCTAssertNil(try simulator.scan(link: newest, document: "PNOEE-30303039914-MOCK-Q"))
        started.process.waitUntilExit()
        let stderr = (try? String(contentsOf: started.stderr, encoding: .utf8)) ?? ""
        XCTAssertEqual(started.process.terminationStatus, 0, stderr)
        // Every line, the device_link events and the result, fits docs/json-schema.json.
        let lines = try assertValidJSON(RunResult(status: 0, reason: .exit, stdoutData: try Data(contentsOf: started.stdout),
                                                  stderrData: Data()))
        XCTAssertEqual(lines.last?["event"] as? String, "result")
        let paths = try simulator.requests().compactMap { $0["path"] as? String }
        XCTAssertTrue(paths.contains("/smart-id-rp/v3/signature/notification/linked/PNOEE-30303039914-MOCK-Q"), "\(paths)")
        // The session secret (the HMAC key) never reaches the output.
        let token = try XCTUnwrap(current.link.components(separatedBy: "sessionToken=").last?.prefix { $0 != "&" })
        let issued = try XCTUnwrap(try simulator.requests().last { $0["sessionToken"] as? String == String(token) })
        let secret = try XCTUnwrap(issued["sessionSecret"] as? String)
        let output = (try String(contentsOf: started.stdout, encoding: .utf8)) + stderr
        for form in [secret, secret.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")] {
            XCTAssertFalse(output.contains(form.trimmingCharacters(in: ["="])), "the session secret was printed")
        }
        XCTAssertTrue(try signatureXML(path).contains("sha256-rsa-MGF1"))
        try assertValid(path)
    }

    /// The device_link events printed so far.
    func deviceLinks(_ stdout: URL) -> [String] {
        let text = (try? String(contentsOf: stdout, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            ((try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any])?["device_link"] as? String
        }
    }

    /// Ctrl-C while the QR code is shown: one line, exit status 1, the container unchanged.
    func testCtrlCStopsAQRSigning() throws {
        let path = try container()
        let before = try read(path)
        let started = try startTool(Self.binary, ["sign", path, "--method", "smart-id", "qr=yes", "--json"] + settings())
        let deadline = Date().addingTimeInterval(30)
        while deviceLinks(started.stdout).isEmpty, Date() < deadline, started.process.isRunning { usleep(50_000) }
        XCTAssertFalse(deviceLinks(started.stdout).isEmpty)
        kill(started.process.processIdentifier, SIGINT)
        started.process.waitUntilExit()
        XCTAssertEqual(started.process.terminationStatus, 1)
        let stderr = try String(contentsOf: started.stderr, encoding: .utf8)
        XCTAssertTrue(stderr.contains("cancelled; the container is unchanged"), stderr)
        XCTAssertEqual(try read(path), before)
    }

    /// pyasice 1.2.0 verifies only PKCS#1 v1.5 signature methods (it parses SignatureMethod as
    /// rsa-sha…): a v3 pkcs1 signature is accepted, an RSASSA-PSS one is refused by pyasice for
    /// its algorithm, though asicfs says VALID (the spec's §14).
    func testPyasiceAcceptsPKCS1AndDoesNotSupportPSS() throws {
        let services = try XCTUnwrap(Self.shared.services)
        let python = IndependentValidatorTests.venvPython
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: python), "run scripts/setup-pyasice.sh (make test does)")
        let check = Self.packageRoot.path + "/Tests/SignatureTests/Interop/pyasice_check.py"
        for algorithm in ["pkcs1", "pss"] {
            let path = try container()
            // pyasice checks RSA-signed OCSP answers only.
            assertSuccess(try asicfs(["sign", path, "--method", "smart-id", "country=EE", "idcode=30303039914"]
                + settings(["smart-id.signature-algorithm=\(algorithm)", "ocsp-url=\(services.ocspRSAURL)"])))
            try assertValid(path)
            let pyasice = try runTool(python, [check, path])
            if algorithm == "pkcs1" {
                XCTAssertEqual(pyasice.status, 0, pyasice.stdout + pyasice.stderr)
                XCTAssertTrue(pyasice.stdout.hasSuffix("ALL OK\n"), pyasice.stdout)
            } else {
                XCTAssertNotEqual(pyasice.status, 0, pyasice.stdout)
                XCTAssertTrue((pyasice.stdout + pyasice.stderr).contains("MGF1"), pyasice.stdout + pyasice.stderr)
            }
        }
    }

    /// On a terminal: the QR code in UTF-8 half blocks with the elapsed time, redrawn in place
    /// (cursor up over the previous drawing) each second. `script` gives asicfs a terminal; with
    /// smart-id.timeout=3 nobody scans and the signing ends after three seconds.
    func testTheTerminalQRCodeIsRedrawnInPlaceEachSecond() throws {
        let path = try container()
        let command = ([Self.binary, "sign", path, "--method", "smart-id", "qr=yes"] + (try settings(["smart-id.timeout=3"])))
            .map { "'" + $0 + "'" }.joined(separator: " ")
        let result = try runTool("/usr/bin/script", ["-qefc", command, "/dev/null"])
        XCTAssertEqual(result.status, 1, result.stdout)
        XCTAssertTrue(result.stdout.contains("the user did not confirm within 3 s"), result.stdout)
        // The terminal's line ends are CR LF (one Character in Swift): made plain LF first.
        let text = result.stdout.replacingOccurrences(of: "\r\n", with: "\n")
        XCTAssertTrue(text.contains("Scan the QR code with the Smart-ID app (0 s)"), text)
        XCTAssertTrue(text.contains("Scan the QR code with the Smart-ID app (2 s)"), text)
        let drawnLines = text.components(separatedBy: "Scan the QR code")[0].components(separatedBy: "\n")
            .filter { $0.contains { "█▀▄".contains($0) } }.count
        XCTAssertGreaterThan(drawnLines, 10, String(text.prefix(3000)).debugDescription)
        XCTAssertEqual(drawnLines, text.components(separatedBy: "Scan the QR code")[1]
            .components(separatedBy: "\n").filter { $0.contains { "█▀▄".contains($0) } }.count, "every redraw has as many lines")
        // Each redraw first moves up over the previous drawing (its lines plus the time line).
        XCTAssertTrue(text.contains("\u{1B}[\(drawnLines + 1)A"), "no cursor-up by \(drawnLines + 1): " + text.components(separatedBy: "(0 s)")[1].prefix(200).debugDescription)
        XCTAssertTrue(text.contains("▀") && text.contains("▄"), "half blocks")
    }
}

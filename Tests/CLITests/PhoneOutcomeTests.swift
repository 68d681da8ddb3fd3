import Foundation
import TestTools
import XCTest

/// Every outcome of the Mobile-ID and Smart-ID simulators through the real `asicfs sign`: one
/// line on stderr naming what happened, exit status 1, and the container byte for byte as it was.
/// Also a wrong pinned certificate and a service that hangs. (The sentences themselves are
/// checked per result code in SignatureTests; here the command line's part.)
final class PhoneOutcomeTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    nonisolated(unsafe) static var mobileID: MobileIDSimulator?
    nonisolated(unsafe) static var smartID: SmartIDSimulator?

    override class func setUp() {
        shared = SharedTestServices(label: "cli-phone-outcomes")
        guard let pki = shared.services?.pki else { return }
        mobileID = try? MobileIDSimulator.start(pki: pki, folder: shared.folder + "/mobile-id", confirmAfter: 0.1,
                                                userTimeout: 0.3)
        smartID = try? SmartIDSimulator.start(pki: pki, folder: shared.folder + "/smart-id", confirmAfter: 0.1)
    }

    override class func tearDown() {
        mobileID?.stop()
        smartID?.stop()
        shared.stop()
    }

    func settings(midCert: String? = nil) throws -> [String] {
        let services = try XCTUnwrap(Self.shared.services, Self.shared.failure ?? "services")
        let mid = try XCTUnwrap(Self.mobileID, "the Mobile-ID simulator")
        let sid = try XCTUnwrap(Self.smartID, "the Smart-ID simulator")
        return ["tsa-url=\(services.tsaURL)", "tsl=none", "trust-anchors=\(services.pki.chain)",
                "mobile-id.url=\(mid.url)", "mobile-id.tls-cert=\(midCert ?? mid.tlsCertificate)",
                "smart-id.url=\(sid.url)", "smart-id.tls-cert=\(sid.tlsCertificate)", "mobile-id.timeout=2",
                "smart-id.timeout=2"].flatMap { ["-o", $0] }
    }

    func container() throws -> String {
        assertSuccess(try asicfs(["create", "doc.asice", try write("contract.txt", "the contract\n")]))
        return path("doc.asice")
    }

    func expectRefusal(_ method: String, _ parameters: [String], mentions words: [String], settings: [String]? = nil,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let path = try container()
        let before = try read(path)
        let result = try asicfs(["sign", path, "--method", method] + parameters + (settings ?? self.settings()))
        XCTAssertEqual(result.status, 1, "\(parameters): \(result.stderr)", file: file, line: line)
        let message = result.stderr.split(separator: "\n").last.map(String.init) ?? ""
        XCTAssertTrue(message.hasPrefix("asicfs: "), message, file: file, line: line)
        for word in words {
            XCTAssertTrue(message.lowercased().contains(word.lowercased()), "'\(word)' missing in: \(message)", file: file, line: line)
        }
        XCTAssertEqual(try read(path), before, "\(parameters)", file: file, line: line)
        try FileManager.default.removeItem(atPath: path)
    }

    func testEveryMobileIDOutcome() throws {
        let outcomes: [((String, String), [String])] = [
            (MobileIDSimulator.Number.notMIDClient, ["not", "Mobile-ID"]),
            (MobileIDSimulator.Number.deliveryError, ["deliver"]),
            (MobileIDSimulator.Number.userCancelled, ["cancelled on the phone"]),
            (MobileIDSimulator.Number.hashMismatch, ["Mobile-ID"]),
            (MobileIDSimulator.Number.simError, ["SIM"]),
            (MobileIDSimulator.Number.phoneAbsent, ["not reachable"]),
            (MobileIDSimulator.Number.timeout, ["expired"]),
            (MobileIDSimulator.Number.malformedJSON, ["cannot read"]),
            (MobileIDSimulator.Number.internalError, ["Mobile-ID"]),
            (MobileIDSimulator.Number.runsForever, ["did not confirm within 2 s"]),
            (MobileIDSimulator.Number.hangs, ["2 s"]),
            (MobileIDSimulator.Number.wrongSignature, ["does not verify"]),
        ]
        for ((phone, code), words) in outcomes {
            try expectRefusal("mobile-id", ["phone=\(phone)", "idcode=\(code)"], mentions: words)
        }
        // Pinned to another certificate: refused before any request is answered.
        let other = try write("other.pem", try String(contentsOfFile: try XCTUnwrap(Self.smartID).tlsCertificate, encoding: .utf8))
        try expectRefusal("mobile-id", ["phone=\(MobileIDSimulator.Number.ecOK.0)", "idcode=\(MobileIDSimulator.Number.ecOK.1)"],
                          mentions: ["TLS"], settings: try settings(midCert: other))
    }

    func testEverySmartIDOutcome() throws {
        let outcomes: [(String, [String])] = [
            ("30403039917", ["cancelled"]), ("30403039928", ["cancelled"]), ("30403039939", ["cancelled"]),
            ("30403039946", ["cancelled"]), ("30403039950", ["cancelled"]), ("30403039961", ["cancelled"]),
            ("30403039972", ["wrong verification code"]), ("30403039983", ["expired"]),
            ("50001010017", ["Smart-ID"]), ("50001010028", ["update"]), ("50001010040", ["qualified"]),
            ("50001010050", ["Smart-ID"]), ("50001010061", ["asicfs"]),
            ("50001010072", ["Smart-ID: the service is under maintenance (HTTP 580)"]),
            ("50001010170", ["Smart-ID: the service failed with an internal error (HTTP 500)"]),
            ("50001010104", ["ADVANCED"]), ("50001010115", ["did not confirm within 2 s"]),
            ("50001010126", ["not JSON"]), ("50001010167", ["does not verify"]), ("50001010192", ["Smart-ID"]),
        ]
        for (code, words) in outcomes {
            try expectRefusal("smart-id", ["country=EE", "idcode=\(code)"], mentions: words)
        }
    }
}

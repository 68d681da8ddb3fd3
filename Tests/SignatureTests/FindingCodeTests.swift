import ASiC
import Foundation
import TestTools
import Validation
import XCTest

/// `asicfs verify --json` gives every error and warning a stable code, and the man page's table
/// (VALIDATION, Finding codes) is the list a script can rely on: the two must stay equal.
final class FindingCodeTests: LoopbackServicesTestCase {
    override class var label: String { "finding-codes" }

    /// The codes in the man page's table, in order.
    static func documentedCodes() throws -> [String] {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        let page = try String(contentsOf: url.appendingPathComponent("man/asicfs.1"), encoding: .utf8)
        let section = try XCTUnwrap(page.range(of: ".SS Finding codes\n"), "the man page has no Finding codes table")
        let start = try XCTUnwrap(page.range(of: "\n_\n", range: section.upperBound..<page.endIndex))
        let end = try XCTUnwrap(page.range(of: "\n.TE\n", range: start.upperBound..<page.endIndex))
        return page[start.upperBound..<end.lowerBound].split(separator: "\n")
            .filter { $0.contains("\t") }
            .map { String($0.prefix { $0 != "\t" }).replacingOccurrences(of: "\\-", with: "-") }
    }

    func testTheManPageListsExactlyTheCodesTheValidatorCanEmit() throws {
        let documented = try Self.documentedCodes()
        XCTAssertEqual(Set(documented).count, documented.count, "a code is listed twice: \(documented)")
        XCTAssertEqual(documented.sorted(), FindingCode.allCases.map(\.rawValue).sorted())
    }

    /// A signature with several problems at once: each error and warning in the JSON report has
    /// a severity, a message and one of the documented codes.
    func testEveryErrorAndWarningInTheJSONReportCarriesADocumentedCode() throws {
        let services = try services
        let path = Self.folder + "/codes.asice"
        let container = try Container.create(at: path, files: [NewDataFile(bytes: Array("one\n".utf8), name: "one.txt")])
        let forge = SignatureForge(environment: try environment(), tsaURL: services.tsaURL, p12: services.pki.signerP12)
        var shaping = SignatureForge.Shaping()
        shaping.unsigned = { _ in "" }  // profile B: no-timestamp
        shaping.signedProperties = { $0.replacingOccurrences(of: ">text/plain<", with: ">text/plain; bad<") }  // mime-type twice
        _ = try forge.sign(container, shaping)

        let report = try environment().validator().validate(try Container.open(path))
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any])
        let signatures = try XCTUnwrap(json["signatures"] as? [[String: Any]])
        let findings = try signatures.flatMap { signature in
            try XCTUnwrap(signature["errors"] as? [[String: String]]) + XCTUnwrap(signature["warnings"] as? [[String: String]])
        } + XCTUnwrap(json["findings"] as? [[String: String]])
        let documented = Set(try Self.documentedCodes())
        XCTAssertEqual(Set(findings.compactMap { $0["code"] }), ["no-timestamp", "mime-type", "signer-not-trusted"], report.text)
        for finding in findings {
            XCTAssertTrue(documented.contains(finding["code"] ?? ""), "\(finding)")
            XCTAssertFalse((finding["message"] ?? "").isEmpty, "\(finding)")
            XCTAssertNotNil(finding["severity"], "\(finding)")
        }
    }
}

import ASiC
import Crypto
import Foundation
import Trust
import Validation
import XCTest

/// The reference implementation's verdicts for its own test containers and trusted lists
/// (Tests/Fixtures/libdigidocpp/EXPECTED.tsv).
final class CorpusVerdictTests: XCTestCase {
    static let corpus = XAdESCoreTests.corpus

    func store(list: String) throws -> TrustStore {
        let tslCert = try Certificate.parse(Array(try Data(contentsOf: URL(fileURLWithPath: Self.corpus + "TSL.crt"))))
        return try TrustStore.load(TrustSettings(tsl: Self.corpus + list, tslCerts: [tslCert],
                                                 cacheDir: NSTemporaryDirectory() + "asicfs-tsl-cache-none"))
    }

    func report(_ container: String, list: String = "TSL.xml") throws -> ContainerReport {
        Validator(trust: try store(list: list)).validate(try Container.open(Self.corpus + container))
    }

    func testTslContainerIsValidWithTheTestLOTL() throws {
        let result = try report("tsl.asice")
        XCTAssertEqual(result.verdict, .valid, result.text)
        XCTAssertEqual(result.signatures.first?.qualification, "QES", result.text)
        XCTAssertEqual(result.signatures.first?.timeStampTime.map(ISOTime.string), "2016-11-28T13:46:43Z")
    }

    func testForgedSignatureIsInvalid() throws {
        let result = try report("forged_lt.asice")
        XCTAssertEqual(result.verdict, .invalid, result.text)
        XCTAssertTrue(result.signatures[0].findings.contains { $0.code == "signature-value" }, result.text)
        XCTAssertEqual(result.signatures[0].signerName, "MÖLDER,HUGO MARTIN,38910239121")
    }

    func testASiCSTimeStampTokens() throws {
        for name in ["test.asics", "test-meta.asics", "test-tera.asics", "test-tera-empty.asics"] {
            let result = try report(name)
            XCTAssertEqual(result.verdict, .valid, "\(name): \(result.text)")
            XCTAssertEqual(result.signatures.first?.kind, "TimeStampToken")
        }
        let invalid = try report("test-invalidts.asics")
        XCTAssertEqual(invalid.verdict, .invalid, invalid.text)
        XCTAssertTrue(invalid.text.contains("message imprint does not match"), invalid.text)
    }

    /// What libdigidocpp's tool prints for each list (column `digidoc_tool_offline`): `OK` ->
    /// VALID, `OK (NonQSCD)` -> VALID_WITH_WARNINGS, `FAILED (Unknown)` -> INDETERMINATE,
    /// `FAILED (Invalid)` -> INVALID.
    func testEveryTrustListScenarioGivesTheReferenceToolsVerdict() throws {
        let table = try String(contentsOfFile: Self.corpus + "EXPECTED.tsv", encoding: .utf8)
        let lines = table.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        let tool = try XCTUnwrap(lines.first?.firstIndex(of: "digidoc_tool_offline"))
        var checked = 0
        for columns in lines.dropFirst() where columns[0].hasPrefix("EE_T-") {
            let printed = columns[tool]
            let expected: Verdict = printed.contains("OK (NonQSCD)") ? .validWithWarnings
                : printed.contains("Validation: OK") ? .valid
                : printed.contains("FAILED (Unknown)") ? .indeterminate
                : printed.contains("FAILED (Invalid)") ? .invalid : .indeterminate
            XCTAssertTrue(printed.contains("OK") || printed.contains("FAILED"), "\(columns[0]): unreadable \(printed)")
            let result = try report("tsl.asice", list: columns[0])
            let signature = try XCTUnwrap(result.signatures.first)
            XCTAssertEqual(result.verdict, expected, "\(columns[0]) (\(printed)): \(result.text)")
            let codes = Set(signature.findings.map(\.code))
            switch expected {
            case .validWithWarnings: XCTAssertTrue(codes.contains("not-qualified"), "\(columns[0]): \(result.text)")
            case .indeterminate:
                let role = columns[0].dropFirst("EE_T-".count).prefix { $0 != "-" && $0 != "." }
                let code = ["CA": "signer-not-trusted", "OCSP": "ocsp-not-trusted", "TSA": "tsa-not-trusted"][String(role)]
                XCTAssertTrue(code.map(codes.contains) ?? false, "\(columns[0]): \(result.text)")
            default: break
            }
            checked += 1
        }
        XCTAssertEqual(checked, 24)
    }
}

import ASiC
import Crypto
import Foundation
import Signing
import TestTools
import Trust
import Validation
import XCTest

/// The verdicts the reference implementation (libdigidocpp) gives for the shapes of its own test
/// containers and trusted lists, recreated: an LT signature of a dated test PKI (signer issued
/// at T0, time-stamped and OCSP-checked now, at T1) validated with each trust-list scenario
/// (TestTools/TrustListScenarios.swift), a forged signature value, and ASiC-S time-stamp tokens.
final class ReferenceVerdictTests: DatedServicesTestCase {
    override class var label: String { "reference-verdicts" }

    /// The signed container and the scenario lists at its times, made once for the class.
    final class Signed: @unchecked Sendable {
        let container: Container
        let lists: TrustScenarioLists
        let folder: String
        init(container: Container, lists: TrustScenarioLists, folder: String) {
            self.container = container
            self.lists = lists
            self.folder = folder
        }
    }

    nonisolated(unsafe) static var signed: Signed?

    override class func tearDown() {
        signed = nil
        super.tearDown()
    }

    func signature() throws -> Signed {
        if let signed = Self.signed { return signed }
        let dated = try dated
        let container = try sign(try newContainer([("test.txt", Array("the signed document\n".utf8))]))
        // T1 is where the loopback TSA put the time-stamp.
        let anchored = try environment().validator().validate(try Container.open(container.path))
        let genTime = try XCTUnwrap(anchored.signatures.first?.timeStampTime, anchored.text)
        let folder = dated.folder + "/lists"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let signed = Signed(container: container, lists: TrustScenarioLists(pki: dated.pki, times: dated.times.with(timeStamp: genTime)),
                            folder: folder)
        Self.signed = signed
        return signed
    }

    func certificate(_ path: String) throws -> Certificate { try TrustAnchorFiles.certificates(inFile: path)[0] }

    /// The signature validated with one scenario list loaded alone, checked against tl-signer.
    func report(_ scenario: TrustListScenario) throws -> ContainerReport {
        let signed = try signature()
        let path = try signed.lists.write(scenario, in: signed.folder)
        let store = try TrustStore.load(TrustSettings(tsl: path, tslCerts: [certificate(signed.lists.pki.tlSigner)],
                                                      cacheDir: signed.folder + "/cache"))
        XCTAssertEqual(store.warnings, [], scenario.rawValue)
        return Validator(trust: store).validate(try Container.open(signed.container.path))
    }

    func testTheSignatureIsValidThroughTheTestListOfLists() throws {
        let signed = try signature()
        try signed.lists.write(.base, in: signed.folder)
        try signed.lists.listOfLists(pointingTo: "https://asicfs.invalid/test-TL/EE_T.xml").write(to: signed.folder + "/TSL.xml")
        let store = try TrustStore.load(TrustSettings(tsl: signed.folder + "/TSL.xml", tslCerts: [certificate(signed.lists.pki.lotlSigner)],
                                                      cacheDir: signed.folder + "/cache"))
        XCTAssertEqual(store.lists.map(\.territory), ["EE", "EE_T"])
        let result = Validator(trust: store).validate(try Container.open(signed.container.path))
        XCTAssertEqual(result.verdict, .valid, result.text)
        XCTAssertEqual(result.signatures.first?.qualification, "QES", result.text)
        XCTAssertEqual(result.signatures.first?.timeStampTime, signed.lists.times.timeStamp)
        XCTAssertLessThan(signed.lists.times.signerNotBefore, signed.lists.times.timeStamp - 500 * TrustScenarioTimes.day)
    }

    /// What the reference's tool prints for each list: `OK` -> VALID, `OK (NonQSCD)` ->
    /// VALID_WITH_WARNINGS, `FAILED (Unknown)` -> INDETERMINATE, with the finding of the role
    /// the scenario is about.
    func testEveryTrustListScenarioGivesTheReferenceToolsVerdict() throws {
        var checked = 0
        for scenario in TrustListScenario.allCases where scenario != .base {
            let expected: Verdict = switch scenario.referenceResult {
            case "OK": .valid
            case "OK (NonQSCD)": .validWithWarnings
            default: .indeterminate
            }
            let result = try report(scenario)
            let signature = try XCTUnwrap(result.signatures.first)
            XCTAssertEqual(result.verdict, expected, "\(scenario.rawValue) (\(scenario.referenceResult)): \(result.text)")
            let codes = Set(signature.findings.map(\.code))
            switch expected {
            case .validWithWarnings: XCTAssertTrue(codes.contains("not-qualified"), "\(scenario.rawValue): \(result.text)")
            case .indeterminate:
                let role = scenario.rawValue.dropFirst("EE_T-".count).prefix { $0 != "-" }
                let code = ["CA": "signer-not-trusted", "OCSP": "ocsp-not-trusted", "TSA": "tsa-not-trusted"][String(role)]
                XCTAssertEqual(code.map { codes.contains($0) }, true, "\(scenario.rawValue): \(result.text)")
            default: XCTAssertEqual(codes, [], "\(scenario.rawValue): \(result.text)")
            }
            checked += 1
        }
        XCTAssertEqual(checked, 24)
    }

    /// The reference's forged_lt.asice: the SignatureValue was not made by the key of the
    /// certificate the signature names.
    func testAForgedSignatureValueIsInvalid() throws {
        var shaping = SignatureForge.Shaping()
        shaping.signatureValue = { value in value.enumerated().map { $0.offset == value.count - 1 ? $0.element ^ 0x01 : $0.element } }
        let container = try sign(try newContainer([("test.txt", Array("the signed document\n".utf8))]), shaping)
        let result = try environment().validator().validate(try Container.open(container.path))
        XCTAssertEqual(result.verdict, .invalid, result.text)
        XCTAssertTrue(result.signatures[0].findings.contains { $0.code == "signature-value" }, result.text)
        XCTAssertEqual(result.signatures[0].signerName, "JÕEORG,JAAK-KRISTJAN,38001085718")
    }

    // MARK: - ASiC-S time-stamp tokens (the reference's test*.asics)

    func stamp(_ bytes: [UInt8]) throws -> [UInt8] {
        let http = try environment().httpClient()
        return try TimeStampClient(url: try dated.services.tsaURL, post: http.post).stamp(digest: Digest.hash(bytes, .sha256)).der
    }

    /// An ASiC-S container with these entries after `mimetype` (Python's zipfile; a name ending
    /// in "/" is a folder entry).
    func asics(_ entries: [(String, [UInt8])]) throws -> Container {
        let path = try dated.folder + "/s-\(UUID().uuidString.prefix(8)).asics"
        try TestContainers.asics(path, entries)
        return try Container.open(path)
    }

    func testASiCSTimeStampTokens() throws {
        let text = Array("test\n".utf8)
        let ddoc = Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?><SignedDoc format=\"DIGIDOC-XML\" version=\"1.3\"></SignedDoc>\n".utf8)
        let manifest = Array(("<?xml version=\"1.0\" encoding=\"UTF-8\"?><manifest:manifest xmlns:manifest="
            + "\"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0\"><manifest:file-entry manifest:full-path=\"/\" "
            + "manifest:media-type=\"application/vnd.etsi.asic-s+zip\"/></manifest:manifest>").utf8)
        let shapes: [(String, [(String, [UInt8])])] = [
            ("one file and its token", [("test1.txt", text), ("META-INF/timestamp.tst", try stamp(text))]),
            ("extra META-INF content", [("META-INF/", []), ("META-INF/manifest.xml", manifest), ("test1.txt", text),
                                        ("META-INF/timestamp.tst", try stamp(text))]),
            ("a time-stamped DDOC", [("ddoc_for_testing.ddoc", ddoc), ("META-INF/timestamp.tst", try stamp(ddoc))]),
            ("an empty data file", [("emptyFile.ddoc", []), ("META-INF/timestamp.tst", try stamp([]))]),
        ]
        for (shape, entries) in shapes {
            let result = try environment().validator().validate(try asics(entries))
            XCTAssertEqual(result.verdict, .valid, "\(shape): \(result.text)")
            XCTAssertEqual(result.signatures.first?.kind, "TimeStampToken", shape)
        }
        // The token of other data: its message imprint does not match the data file.
        let invalid = try environment().validator().validate(try asics([("test2.txt", text),
                                                                         ("META-INF/timestamp.tst", try stamp(ddoc))]))
        XCTAssertEqual(invalid.verdict, .invalid, invalid.text)
        XCTAssertTrue(invalid.text.contains("message imprint does not match"), invalid.text)
    }
}

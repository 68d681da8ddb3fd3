import ASiC
import Configuration
import Crypto
import Foundation
import Signing
import TestTools
import Trust
import Validation
import XAdES
import XCTest

/// Verdicts on signatures shaped the way other producers write them, where asicfs once
/// differed from the reference implementation (libdigidocpp) — some in the dangerous direction.
/// Every signature here is validly signed, time-stamped and OCSP-checked by the test PKI and the
/// loopback services (`SignatureForge`): only the shape under test is wrong.
final class CraftedSignatureTests: LoopbackServicesTestCase {
    override class var label: String { "crafted" }

    func forge() throws -> SignatureForge {
        let services = try services
        return SignatureForge(environment: try environment(), tsaURL: services.tsaURL, p12: services.pki.signerP12)
    }

    func newContainer(_ files: [(String, String)] = [("contract.txt", "the contract\n")]) throws -> Container {
        let path = Self.folder + "/c-\(UUID().uuidString.prefix(8)).asice"
        return try Container.create(at: path, files: files.map { NewDataFile(bytes: Array($0.1.utf8), name: $0.0) })
    }

    func validate(_ container: Container) throws -> SignatureReport {
        let report = try environment().validator().validate(try Container.open(container.path))
        return try XCTUnwrap(report.signatures.first, report.text)
    }

    func assertFinding(_ report: SignatureReport, _ verdict: Verdict, _ words: [String],
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(report.verdict, verdict, report.text, file: file, line: line)
        let messages = report.findings.map(\.message).joined(separator: " | ")
        for word in words { XCTAssertTrue(messages.contains(word), "'\(word)' not in: \(messages)", file: file, line: line) }
    }

    /// The forge itself makes signatures asicfs calls VALID when nothing is shaped.
    func testAnUnshapedForgedSignatureIsValid() throws {
        let report = try validate(try forge().sign(try newContainer()))
        XCTAssertEqual(report.verdict, .valid, report.text)
    }

    /// XML-DSig references are URIs: only %XX is decoded, so `Faili+nimi.txt` is not the data
    /// file `Faili nimi.txt` (it matched, and the container came out VALID).
    func testAPlusInAReferenceIsNotASpace() throws {
        let container = try newContainer([("Faili nimi.txt", "the file\n")])
        var shaping = SignatureForge.Shaping()
        shaping.signedInfo = { $0.replacingOccurrences(of: "URI=\"Faili%20nimi.txt\"", with: "URI=\"Faili+nimi.txt\"") }
        let report = try validate(try forge().sign(container, shaping))
        assertFinding(report, .invalid, ["'Faili+nimi.txt'", "not a data file"])
    }

    /// Two tokens inside one SignatureTimeStamp: INVALID (the first was used, the rest ignored).
    func testTwoTokensInOneSignatureTimeStampAreInvalid() throws {
        var shaping = SignatureForge.Shaping()
        shaping.unsigned = { parts in
            let token = "<xades:EncapsulatedTimeStamp>\(Data(parts.timeStamp).base64EncodedString())</xades:EncapsulatedTimeStamp>"
            return parts.xml(signatureTimeStamp: "<xades:SignatureTimeStamp Id=\"\(parts.id)-T0\"><ds:CanonicalizationMethod Algorithm=\"\(parts.canonicalizationURI)\"></ds:CanonicalizationMethod>"
                + token + token + "</xades:SignatureTimeStamp>")
        }
        let report = try validate(try forge().sign(try newContainer(), shaping))
        assertFinding(report, .invalid, ["exactly one time-stamp token, not 2"])
    }

    /// Damaged OCSP bytes are broken data: INVALID, not INDETERMINATE.
    func testACorruptedOCSPResponseIsInvalid() throws {
        var shaping = SignatureForge.Shaping()
        shaping.unsigned = { parts in
            var damaged = parts.ocsp
            for index in 8..<min(40, damaged.count) { damaged[index] ^= 0xA5 }
            return parts.xml(ocspValue: damaged)
        }
        let report = try validate(try forge().sign(try newContainer(), shaping))
        assertFinding(report, .invalid, ["OCSP response", "damaged"])
    }

    /// XML-DSig 1.1 prescribes raw r||s for ECDSA; a DER SEQUENCE { r, s } is refused as the
    /// reference refuses it (it was accepted).
    func testADEREncodedECDSASignatureValueIsInvalid() throws {
        var shaping = SignatureForge.Shaping()
        shaping.signatureValue = { raw in ECDSASignature.der(fromRaw: raw) ?? raw }
        let report = try validate(try forge().sign(try newContainer(), shaping))
        assertFinding(report, .invalid, ["ECDSA signature value", "DER"])
    }

    /// Without a CanonicalizationMethod in SignatureTimeStamp, Canonical XML 1.0 is used
    /// (EN 319 132-1's default); an imprint made with another method does not verify.
    func testASignatureTimeStampWithoutCanonicalizationMethodUsesC14N10() throws {
        func stampWithoutMethod(_ parts: SignatureForge.UnsignedParts) -> String {
            parts.xml(signatureTimeStamp: "<xades:SignatureTimeStamp Id=\"\(parts.id)-T0\"><xades:EncapsulatedTimeStamp>"
                + Data(parts.timeStamp).base64EncodedString() + "</xades:EncapsulatedTimeStamp></xades:SignatureTimeStamp>")
        }
        var inclusive = SignatureForge.Shaping()
        inclusive.timeStampCanonicalization = .c14n10
        inclusive.unsigned = stampWithoutMethod
        XCTAssertEqual(try validate(try forge().sign(try newContainer(), inclusive)).verdict, .valid)

        var exclusive = SignatureForge.Shaping()
        exclusive.timeStampCanonicalization = .exclusive
        exclusive.unsigned = stampWithoutMethod
        assertFinding(try validate(try forge().sign(try newContainer(), exclusive)), .invalid, ["time-stamp does not verify"])
    }

    // MARK: - BDOC time-marks and policies

    func timeMark(_ nonce: SignatureForge.TimeMarkNonce = .withNullParameter, responder: String? = nil,
                  policy: String? = SignatureForge.policy()) throws -> SignatureForge.Shaping {
        var shaping = SignatureForge.Shaping()
        shaping.timeMark = nonce
        shaping.ocspURL = try responder ?? services.ocspTMURL
        if let policy { shaping.signedProperties = SignatureForge.inserting(policy) }
        return shaping
    }

    /// The nonce's DigestInfo may leave out the NULL parameter: parsed as ASN.1, both spellings
    /// are VALID, as in the reference (a fixed-prefix comparison refused the second).
    func testATimeMarkNonceWithOrWithoutTheNullParameterIsValid() throws {
        for nonce in [SignatureForge.TimeMarkNonce.withNullParameter, .withoutParameter] {
            let report = try validate(try forge().sign(try newContainer(), try timeMark(nonce)))
            XCTAssertEqual(report.verdict, .valid, "\(nonce): \(report.text)")
            XCTAssertEqual(report.profile, "EPES/time-mark", report.text)
        }
    }

    /// Only a responder whose certificate names the time-mark policy makes a time-mark: INVALID,
    /// as libdigidocpp's default says (it was a warning).
    func testATimeMarkFromAResponderWithoutTheTimeMarkPolicyIsInvalid() throws {
        let report = try validate(try forge().sign(try newContainer(), try timeMark(responder: try services.ocspURL)))
        assertFinding(report, .invalid, ["time-mark policy"])
    }

    /// BDOC 2.1 policy checks as in the reference: an empty SPURI, an identifier that is not the
    /// OID URN, an implied policy in a time-mark signature are INVALID (as a missing SPURI is).
    func testBDOCPolicyShapesTheReferenceRefuses() throws {
        let cases: [(String, String, [String])] = [
            ("empty SPURI", SignatureForge.policy(spuri: ""), ["SPURI"]),
            ("no SPURI", SignatureForge.policy(spuri: nil), ["SPURI"]),
            ("bare OID", SignatureForge.policy(identifier: "1.3.6.1.4.1.10015.1000.3.2.1"), ["BDOC 2.1 policy"]),
            ("URI form", SignatureForge.policy(identifier: "https://www.sk.ee/repository/bdoc-spec21.pdf"), ["BDOC 2.1 policy"]),
            ("implied", "<xades:SignaturePolicyIdentifier><xades:SignaturePolicyImplied></xades:SignaturePolicyImplied></xades:SignaturePolicyIdentifier>",
             ["policy"]),
        ]
        for (label, policy, words) in cases {
            let report = try validate(try forge().sign(try newContainer(), try timeMark(policy: policy)))
            XCTAssertEqual(report.verdict, .invalid, "\(label): \(report.text)")
            let messages = report.findings.map(\.message).joined(separator: " | ")
            for word in words { XCTAssertTrue(messages.contains(word), "\(label): '\(word)' not in: \(messages)") }
        }
    }

    // MARK: - Issue 30: time-mark responders, policies, profiles

    func validate(_ container: Container, settings: [String]) throws -> SignatureReport {
        let report = try environment(settings).validator().validate(try Container.open(container.path))
        return try XCTUnwrap(report.signatures.first, report.text)
    }

    /// SK's test responders name 1.3.6.1.4.1.10015.3.1.1, not the production time-mark policy:
    /// `ocsp-tm-policy` lists the policies that make a time-mark (it replaces the default, as
    /// libdigidocpp's `ocsp.tm.profile` does).
    func testTheTimeMarkResponderPolicyIsConfigurable() throws {
        let testResponder = try forge().sign(try newContainer(), try timeMark(responder: try services.ocspTMTestURL))
        let productionResponder = try forge().sign(try newContainer(), try timeMark())
        assertFinding(try validate(testResponder), .invalid, ["time-mark policy 1.3.6.1.4.1.10015.4.1.2"])
        XCTAssertEqual(try validate(productionResponder).verdict, .valid)

        let testOnly = ["ocsp-tm-policy=1.3.6.1.4.1.10015.3.1.1"]
        let accepted = try validate(testResponder, settings: testOnly)
        XCTAssertEqual(accepted.verdict, .valid, accepted.text)
        assertFinding(try validate(productionResponder, settings: testOnly), .invalid, ["1.3.6.1.4.1.10015.3.1.1"])

        let both = ["ocsp-tm-policy=1.3.6.1.4.1.10015.4.1.2, 1.3.6.1.4.1.10015.3.1.1"]
        XCTAssertEqual(try validate(testResponder, settings: both).verdict, .valid)
        XCTAssertEqual(try validate(productionResponder, settings: both).verdict, .valid)
    }

    /// `tsl = test` (SK's test services) adds the test time-mark policy to the default one.
    func testTheTestListAddsTheTestTimeMarkPolicy() throws {
        func policies(_ settings: [String]) throws -> [String] {
            try SignatureEnvironment(configuration: try Configuration.load(explicitPath: "/dev/null", overrides: settings)).timeMarkPolicies
        }
        XCTAssertEqual(try policies([]), ["1.3.6.1.4.1.10015.4.1.2"])
        XCTAssertEqual(try policies(["tsl=test"]), ["1.3.6.1.4.1.10015.4.1.2", "1.3.6.1.4.1.10015.3.1.1"])
        XCTAssertEqual(try policies(["tsl=test", "ocsp-tm-policy=1.2.3"]), ["1.2.3", "1.3.6.1.4.1.10015.3.1.1"])
        XCTAssertThrowsError(try policies(["ocsp-tm-policy=not-an-oid"])) {
            XCTAssertTrue("\($0)".contains("ocsp-tm-policy"), "\($0)")
        }
        // The system-wide file sets it for everyone.
        let system = Self.folder + "/system-\(UUID().uuidString.prefix(8)).conf"
        try "ocsp-tm-policy = 1.3.6.1.4.1.10015.3.1.1\n".write(toFile: system, atomically: true, encoding: .utf8)
        let fromSystem = try Configuration.load(explicitPath: nil, overrides: [],
                                                environment: ["ASICFS_SYSTEM_CONFIG": system, "HOME": Self.folder + "/no-home"])
        XCTAssertEqual(try SignatureEnvironment(configuration: fromSystem).timeMarkPolicies, ["1.3.6.1.4.1.10015.3.1.1"])
    }

    /// When nobody trusts the OCSP responder its policy proves nothing either way: the verdict
    /// is INDETERMINATE (responder not trusted), as libdigidocpp and SiVa say, not INVALID.
    func testAnUntrustedResponderIsIndeterminateNotATimeMarkFailure() throws {
        let signed = try forge().sign(try newContainer(), try timeMark(responder: try services.ocspURL))
        let store = try environment().trust().get()
        let result = Validator(trust: ResponderDistrust(store: store)).validate(try Container.open(signed.path))
        let report = try XCTUnwrap(result.signatures.first, result.text)
        assertFinding(report, .indeterminate, ["responder not trusted"])
        XCTAssertEqual(report.findings.map(\.code), ["ocsp-not-trusted"], report.text)
    }

    /// digidoc4j refuses a SignaturePolicyIdentifier that is both explicit and implied.
    func testAPolicyBothExplicitAndImpliedIsInvalid() throws {
        let both = SignatureForge.policy().replacingOccurrences(
            of: "</xades:SignaturePolicyId>", with: "</xades:SignaturePolicyId><xades:SignaturePolicyImplied></xades:SignaturePolicyImplied>")
        for shaping in [try timeMark(policy: both), { var lt = SignatureForge.Shaping(); lt.signedProperties = SignatureForge.inserting(both); return lt }()] {
            let report = try validate(try forge().sign(try newContainer(), shaping))
            assertFinding(report, .invalid, ["SignaturePolicyId", "SignaturePolicyImplied"])
            XCTAssertTrue(report.findings.contains { $0.code == "policy" }, report.text)
        }
    }

    /// Profile B (no time-stamp, no revocation data) is INVALID, as in libdigidocpp and SiVa's
    /// Estonian policy; a T-level signature (time-stamp, no OCSP) stays INDETERMINATE.
    func testProfileBIsInvalidAndTLevelIndeterminate() throws {
        var bProfile = SignatureForge.Shaping()
        bProfile.unsigned = { _ in "" }
        let b = try validate(try forge().sign(try newContainer(), bProfile))
        assertFinding(b, .invalid, ["no time-stamp and no revocation data: not a long-term signature"])
        XCTAssertTrue(b.findings.contains { $0.code == "no-timestamp" && $0.severity == .invalid }, b.text)

        var tLevel = SignatureForge.Shaping()
        tLevel.unsigned = { parts in
            let full = parts.xml()
            guard let start = full.range(of: "<xades:RevocationValues>"), let end = full.range(of: "</xades:RevocationValues>") else { return full }
            return full.replacingCharacters(in: start.lowerBound..<end.upperBound, with: "")
        }
        let t = try validate(try forge().sign(try newContainer(), tLevel))
        XCTAssertEqual(t.verdict, .indeterminate, t.text)
        XCTAssertTrue(t.findings.contains { $0.code == "no-revocation" }, t.text)
    }
}

/// The store's answers, except that no OCSP responder is trusted.
struct ResponderDistrust: TrustAuthority, CertificateSource {
    let store: TrustStore

    func signerIssuer(of certificate: Certificate, intermediates: [Certificate], at time: Date) -> TrustAnswer {
        store.signerIssuer(of: certificate, intermediates: intermediates, at: time)
    }
    func timeStampAuthority(_ certificate: Certificate, intermediates: [Certificate], at time: Date) -> TrustAnswer {
        store.timeStampAuthority(certificate, intermediates: intermediates, at: time)
    }
    func ocspResponder(_ certificate: Certificate, intermediates: [Certificate], at time: Date) -> TrustAnswer {
        .untrusted("this test trusts no OCSP responder")
    }
    func qualification(of certificate: Certificate, intermediates: [Certificate], at time: Date) -> QualificationAnswer {
        store.qualification(of: certificate, intermediates: intermediates, at: time)
    }
    var notices: [String] { store.notices }
    var knownCertificates: [Certificate] { store.knownCertificates }
}

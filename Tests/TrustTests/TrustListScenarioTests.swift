import Crypto
import Foundation
import Trust
import XCTest

/// Every `EE_T-*.xml` of the libdigidocpp corpus, loaded alone with TSL.crt as libdigidocpp's
/// TSLTests do, judged on tsl.asice's certificates at the times EXPECTED.tsv names: the signer's
/// issuer at the signer's notBefore and at the time-stamp, the TSA at genTime, the OCSP
/// responder at producedAt. Each file must give EXPECTED.tsv's verdict, and fail (when it
/// fails) in the role and for the reason its name gives.
final class TrustListScenarioTests: XCTestCase {
    enum Expectation {
        case trusted
        /// The role fails for this reason; `grantedFrom`: when the list trusts it later.
        case fails(TrustRole, TrustFailure.Reason, grantedFrom: String?)
        /// Every role is trusted, but the signer certificate is not QC + QSCD under the qualifiers
        /// in force at `failsAt`; at the other checked times it is.
        case notQualified(qc: Bool, qscd: Bool, failsAt: [Date])
    }

    static let svcstatus = "http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/"
    static let svctype = "http://uri.etsi.org/TrstSvc/Svctype/"
    static func type(_ name: String) -> TrustServiceType { TrustServiceType(uri: svctype + name) }
    static func status(_ name: String) -> TrustServiceStatus { TrustServiceStatus(uri: svcstatus + name) }

    static let scenarios: [String: Expectation] = [
        "EE_T.xml": .trusted,
        "EE_T-CA-non-qa.xml": .fails(.signerIssuer, .otherServiceType(type("CA/PKC")), grantedFrom: nil),
        "EE_T-CA-invalid-type.xml": .fails(.signerIssuer, .otherServiceType(type("TSA/QTST")), grantedFrom: nil),
        "EE_T-CA-withdrawn.xml": .fails(.signerIssuer, .notGranted(status("supervisionrevoked")), grantedFrom: nil),
        "EE_T-CA-granted-later.xml": .fails(.signerIssuer, .notYetListed, grantedFrom: "2013-04-24T11:49:30Z"),
        "EE_T-CA-withdrawn-granted-later.xml":
            .fails(.signerIssuer, .notGranted(status("supervisionrevoked")), grantedFrom: "2013-04-24T11:49:30Z"),
        "EE_T-CA-noqscd-granted-later.xml":
            .fails(.signerIssuer, .otherServiceType(type("CA/PKC")), grantedFrom: "2013-04-24T11:49:30Z"),
        "EE_T-CA-withdrawn-granted-before.xml": .trusted,
        "EE_T-CA-noqscd-granted-before.xml": .trusted,
        // Only the current entry (granted 2016-06-30) says NotQualified; the 2011 history entry
        // still says QCStatement, so only the check at the time-stamp time fails.
        "EE_T-no_QCStatement.xml": .notQualified(qc: false, qscd: true, failsAt: [Corpus.timeStampTime]),
        "EE_T-no_QCSD.xml": .notQualified(qc: true, qscd: false, failsAt: [Corpus.signerNotBefore, Corpus.timeStampTime]),
        "EE_T-OCSP-invalid-type.xml": .fails(.ocspResponder, .otherServiceType(type("TSA/QTST")), grantedFrom: nil),
        "EE_T-OCSP-withdrawn.xml": .fails(.ocspResponder, .notGranted(status("withdrawn")), grantedFrom: nil),
        "EE_T-OCSP-granted-later.xml": .fails(.ocspResponder, .notYetListed, grantedFrom: "2016-11-29T01:00:00Z"),
        "EE_T-OCSP-withdrawn-granted-later.xml":
            .fails(.ocspResponder, .notGranted(status("withdrawn")), grantedFrom: "2016-11-29T01:00:00Z"),
        "EE_T-OCSP-noqscd-granted-later.xml":
            .fails(.ocspResponder, .otherServiceType(type("Certstatus/OCSP")), grantedFrom: "2016-11-29T01:00:00Z"),
        "EE_T-OCSP-withdrawn-granted-before.xml": .trusted,
        "EE_T-OCSP-noqscd-granted-before.xml": .trusted,
        "EE_T-TSA-invalid-type.xml": .fails(.timeStampAuthority, .otherServiceType(type("CA/QC")), grantedFrom: nil),
        "EE_T-TSA-withdrawn.xml": .fails(.timeStampAuthority, .notGranted(status("withdrawn")), grantedFrom: nil),
        "EE_T-TSA-granted-later.xml": .fails(.timeStampAuthority, .notYetListed, grantedFrom: "2016-11-29T01:00:00Z"),
        "EE_T-TSA-withdrawn-granted-later.xml":
            .fails(.timeStampAuthority, .notGranted(status("withdrawn")), grantedFrom: "2016-11-29T01:00:00Z"),
        "EE_T-TSA-noqscd-granted-later.xml":
            .fails(.timeStampAuthority, .otherServiceType(type("TSA")), grantedFrom: "2016-11-29T01:00:00Z"),
        "EE_T-TSA-withdrawn-granted-before.xml": .trusted,
        "EE_T-TSA-noqscd-granted-before.xml": .trusted,
    ]

    func testTheTimesAreTslAsicesOwn() {
        XCTAssertEqual(TslAsice.signer.notBefore, Corpus.signerNotBefore)
        XCTAssertEqual(TslAsice.signer.issuerCommonName, "TEST of ESTEID-SK 2011")
    }

    func testEveryTrustListScenarioOfTheCorpusHasAnExpectation() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Corpus.folder)
            .filter { $0.hasPrefix("EE_T") && $0.hasSuffix(".xml") }
        XCTAssertEqual(files.count, 25)
        XCTAssertEqual(Set(files), Set(Self.scenarios.keys))
    }

    func testEveryScenarioGivesTheVerdictOfExpectedTSV() throws {
        let verdicts = try expectedVerdicts()
        for (file, expectation) in Self.scenarios.sorted(by: { $0.key < $1.key }) {
            let store = try Corpus.store(withList: file)
            XCTAssertEqual(store.warnings, [], file)
            let problems = tslAsiceProblems(store)
            // EE_T.xml's own row is "support"; tsl.asice's row gives the verdict with it (via TSL.xml).
            let row = file == "EE_T.xml" ? "tsl.asice" : file
            let expectedValid = try XCTUnwrap(verdicts[row], "\(row) has no row in EXPECTED.tsv").hasPrefix("valid")
            XCTAssertEqual(problems.isEmpty, expectedValid, "\(file): \(problems)")
            if case .trusted = expectation { XCTAssertEqual(problems, [], file) } else { XCTAssertFalse(problems.isEmpty, file) }
        }
    }

    func testEachFailingScenarioFailsInItsRoleForItsReason() throws {
        for (file, expectation) in Self.scenarios.sorted(by: { $0.key < $1.key }) {
            guard case .fails(let role, let reason, let grantedFrom) = expectation else { continue }
            let store = try Corpus.store(withList: file)
            let time = role == .signerIssuer ? Corpus.signerNotBefore : role == .ocspResponder ? Corpus.ocspProducedAt : Corpus.timeStampTime
            let certificate = role == .signerIssuer ? TslAsice.signer
                : role == .ocspResponder ? TslAsice.ocspResponder : TslAsice.timeStampAuthority
            XCTAssertThrowsError(try store.trust(certificate, as: role, intermediates: [TslAsice.issuingCA], at: time), file) { error in
                guard let failure = error as? TrustFailure else { return XCTFail("\(file): \(error)") }
                XCTAssertEqual(failure.role, role, file)
                XCTAssertEqual(failure.reason, reason, "\(file): \(failure)")
                XCTAssertEqual(failure.grantedFrom, grantedFrom.map(Corpus.date), "\(file): \(failure)")
                XCTAssertNotNil(failure.service, file)
            }
            // Only the role the scenario is about breaks.
            for other in [TrustRole.signerIssuer, .timeStampAuthority, .ocspResponder] where other != role {
                XCTAssertTrue(problems(of: other, in: store).isEmpty, "\(file): \(other): \(problems(of: other, in: store))")
            }
        }
    }

    func testQualifierScenariosOverrideTheCertificatesOwnStatements() throws {
        // The signer certificate itself states QcCompliance and QcSSCD.
        let own = Qualification.of(TslAsice.signer, qualifications: [])
        XCTAssertTrue(own.isQCCompliant && own.isQSCD)
        for (file, expectation) in Self.scenarios.sorted(by: { $0.key < $1.key }) {
            guard case .notQualified(let qc, let qscd, let failsAt) = expectation else { continue }
            let store = try Corpus.store(withList: file)
            for time in [Corpus.signerNotBefore, Corpus.timeStampTime] {
                let qualification = try store.qualification(of: TslAsice.signer, at: time)
                guard failsAt.contains(time) else {
                    XCTAssertTrue(qualification.meetsRequirements, "\(file) at \(time): \(qualification)")
                    continue
                }
                XCTAssertEqual(qualification.isQCCompliant, qc, "\(file): \(qualification)")
                XCTAssertEqual(qualification.isQSCD, qscd, "\(file): \(qualification)")
                XCTAssertFalse(qualification.meetsRequirements, file)
            }
        }
        let noQSCD = try Corpus.store(withList: "EE_T-no_QCSD.xml").qualification(of: TslAsice.signer, at: Corpus.signerNotBefore)
        XCTAssertEqual(noQSCD.description, "does not meet the qualification requirements (the certificate states QcCompliance; "
                       + "the certificate states QcSSCD; the trusted list says QCNoQSCD; the trusted list says QCStatement)")
    }

    func testGrantedBeforeScenariosTrustAtTheHistoricalTimeWithTheQualifiersOfThen() throws {
        let store = try Corpus.store(withList: "EE_T-CA-noqscd-granted-before.xml")
        let path = try store.signerIssuer(of: TslAsice.signer, intermediates: [TslAsice.issuingCA], at: Corpus.signerNotBefore)
        XCTAssertEqual(path.certificates.map(\.der), [TslAsice.signer.der, TslAsice.issuingCA.der])
        guard case .trustedList(let service) = path.source else { return XCTFail("trusted by \(path.source)") }
        XCTAssertTrue(service.name.hasPrefix("TEST of ESTEID-SK 2011"))
        XCTAssertEqual(service.listName, "EE_T (sequence 22)")
        XCTAssertEqual(service.period.type, .qualifiedCA)
        XCTAssertEqual(service.period.status.description, "undersupervision")
        XCTAssertEqual(service.period.start, Corpus.date("2013-04-23T01:00:00Z"))
        XCTAssertEqual(service.period.qualifications.flatMap(\.qualifiers),
                       [Qualification.Qualifier.qcWithSSCD, Qualification.Qualifier.qcStatement])
        XCTAssertTrue(path.qualification.meetsRequirements)
        // Before that entry the service was CA/PKC, so a certificate issued then would not be trusted.
        XCTAssertThrowsError(try store.signerIssuer(of: TslAsice.signer, at: Corpus.date("2013-04-23T00:59:59Z")))
    }

    func testFailureSentencesNameTheServiceTheTimeAndTheStatus() throws {
        func sentence(_ file: String, _ role: TrustRole, _ certificate: Certificate, _ time: Date) throws -> String {
            do {
                _ = try Corpus.store(withList: file).trust(certificate, as: role, at: time)
                return "trusted"
            } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(try sentence("EE_T-CA-non-qa.xml", .signerIssuer, TslAsice.signer, Corpus.signerNotBefore),
                       "issuer TEST of ESTEID-SK 2011 is not a qualified CA (CA/QC) in the trusted list at 2013-04-23T11:49:30Z: "
                       + "it is listed as CA/PKC")
        XCTAssertEqual(try sentence("EE_T-CA-withdrawn-granted-later.xml", .signerIssuer, TslAsice.signer, Corpus.signerNotBefore),
                       "issuer TEST of ESTEID-SK 2011 was not granted at 2013-04-23T11:49:30Z: its trusted-list status was "
                       + "supervisionrevoked since 2013-04-22T11:49:30Z; it is trusted for this only from 2013-04-24T11:49:30Z")
        XCTAssertEqual(try sentence("EE_T-OCSP-granted-later.xml", .ocspResponder, TslAsice.ocspResponder, Corpus.ocspProducedAt),
                       "OCSP responder TEST of SK OCSP RESPONDER 2011 was not granted at 2016-11-28T13:46:43Z: "
                       + "the trusted list has no status for it before 2016-11-29T01:00:00Z")
        XCTAssertEqual(try sentence("EE_T-TSA-withdrawn.xml", .timeStampAuthority, TslAsice.timeStampAuthority, Corpus.timeStampTime),
                       "time-stamping authority DEMO of SK TSA 2014 was not granted at 2016-11-28T13:46:43Z: "
                       + "its trusted-list status was withdrawn since 2016-11-27T21:00:00Z")
    }

    // MARK: - Helpers

    /// What stops tsl.asice from validating with this store, as libdigidocpp checks it.
    func tslAsiceProblems(_ store: TrustStore) -> [String] {
        var found = [TrustRole.signerIssuer, .timeStampAuthority, .ocspResponder].flatMap { problems(of: $0, in: store) }
        for time in [Corpus.signerNotBefore, Corpus.timeStampTime] {
            if let qualification = try? store.qualification(of: TslAsice.signer, intermediates: [TslAsice.issuingCA], at: time),
               !qualification.meetsRequirements {
                found.append("signer \(qualification)")
            }
        }
        return found
    }

    func problems(of role: TrustRole, in store: TrustStore) -> [String] {
        let checks: [(Certificate, Date)] = switch role {
        case .signerIssuer: [(TslAsice.signer, Corpus.signerNotBefore), (TslAsice.signer, Corpus.timeStampTime)]
        case .timeStampAuthority: [(TslAsice.timeStampAuthority, Corpus.timeStampTime)]
        case .ocspResponder: [(TslAsice.ocspResponder, Corpus.ocspProducedAt)]
        }
        return checks.compactMap { certificate, time -> String? in
            do {
                _ = try store.trust(certificate, as: role, intermediates: [TslAsice.issuingCA], at: time)
                return nil
            } catch {
                return "\(error)"
            }
        }
    }

    /// file → expected_verdict, from EXPECTED.tsv.
    func expectedVerdicts() throws -> [String: String] {
        let text = String(decoding: try Corpus.bytes("EXPECTED.tsv"), as: UTF8.self)
        var verdicts: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
            if columns.count > 1 { verdicts[String(columns[0])] = String(columns[1]) }
        }
        return verdicts
    }
}

import Crypto
import Foundation
import TestTools
import Trust
import XCTest

/// Every trust-list scenario of libdigidocpp's TSL tests (TestTools/TrustListScenarios.swift),
/// each list loaded alone as its TSLTests do, judged on the scenario PKI's certificates at the
/// times libdigidocpp checks: the signer's issuer at the signer's notBefore (T0) and at the
/// time-stamp (T1), the TSA at genTime, the OCSP responder at producedAt (both T1). Each list
/// must give the reference's verdict, and fail (when it fails) in the role and for the reason
/// its name gives.
final class TrustListScenarioTests: XCTestCase {
    enum Expectation {
        case trusted
        /// The role fails for this reason; `grantedFrom`: when the list trusts it later.
        case fails(TrustRole, TrustFailure.Reason, grantedFrom: Moment?)
        /// Every role is trusted, but the signer certificate is not QC + QSCD under the qualifiers
        /// in force at `failsAt`; at the other checked times it is.
        case notQualified(qc: Bool, qscd: Bool, failsAt: [Moment])
    }

    /// A time of the scenario, named.
    enum Moment {
        case signerNotBefore, dayAfterSigner, timeStamp, hoursAfterTimeStamp

        func date(_ times: TrustScenarioTimes) -> Date {
            switch self {
            case .signerNotBefore: times.signerNotBefore
            case .dayAfterSigner: times.dayAfterSigner
            case .timeStamp: times.timeStamp
            case .hoursAfterTimeStamp: times.hoursAfterTimeStamp
            }
        }
    }

    static func type(_ name: String) -> TrustServiceType { TrustServiceType(uri: TrustListURI.type(name)) }
    static func status(_ name: String) -> TrustServiceStatus { TrustServiceStatus(uri: TrustListURI.status(name)) }

    static let expectations: [TrustListScenario: Expectation] = [
        .base: .trusted,
        .caNonQA: .fails(.signerIssuer, .otherServiceType(type("CA/PKC")), grantedFrom: nil),
        .caInvalidType: .fails(.signerIssuer, .otherServiceType(type("TSA/QTST")), grantedFrom: nil),
        .caWithdrawn: .fails(.signerIssuer, .notGranted(status("supervisionrevoked")), grantedFrom: nil),
        .caGrantedLater: .fails(.signerIssuer, .notYetListed, grantedFrom: .dayAfterSigner),
        .caWithdrawnGrantedLater: .fails(.signerIssuer, .notGranted(status("supervisionrevoked")), grantedFrom: .dayAfterSigner),
        .caNoQSCDGrantedLater: .fails(.signerIssuer, .otherServiceType(type("CA/PKC")), grantedFrom: .dayAfterSigner),
        .caWithdrawnGrantedBefore: .trusted,
        .caNoQSCDGrantedBefore: .trusted,
        // Only the current entry (granted at the switchover) says NotQualified; the older entry
        // still says QCStatement, so only the check at the time-stamp time fails.
        .noQCStatement: .notQualified(qc: false, qscd: true, failsAt: [.timeStamp]),
        .noQSCD: .notQualified(qc: true, qscd: false, failsAt: [.signerNotBefore, .timeStamp]),
        .ocspInvalidType: .fails(.ocspResponder, .otherServiceType(type("TSA/QTST")), grantedFrom: nil),
        .ocspWithdrawn: .fails(.ocspResponder, .notGranted(status("withdrawn")), grantedFrom: nil),
        .ocspGrantedLater: .fails(.ocspResponder, .notYetListed, grantedFrom: .hoursAfterTimeStamp),
        .ocspWithdrawnGrantedLater: .fails(.ocspResponder, .notGranted(status("withdrawn")), grantedFrom: .hoursAfterTimeStamp),
        .ocspNoQSCDGrantedLater: .fails(.ocspResponder, .otherServiceType(type("Certstatus/OCSP")), grantedFrom: .hoursAfterTimeStamp),
        .ocspWithdrawnGrantedBefore: .trusted,
        .ocspNoQSCDGrantedBefore: .trusted,
        .tsaInvalidType: .fails(.timeStampAuthority, .otherServiceType(type("CA/QC")), grantedFrom: nil),
        .tsaWithdrawn: .fails(.timeStampAuthority, .notGranted(status("withdrawn")), grantedFrom: nil),
        .tsaGrantedLater: .fails(.timeStampAuthority, .notYetListed, grantedFrom: .hoursAfterTimeStamp),
        .tsaWithdrawnGrantedLater: .fails(.timeStampAuthority, .notGranted(status("withdrawn")), grantedFrom: .hoursAfterTimeStamp),
        .tsaNoQSCDGrantedLater: .fails(.timeStampAuthority, .otherServiceType(type("TSA")), grantedFrom: .hoursAfterTimeStamp),
        .tsaWithdrawnGrantedBefore: .trusted,
        .tsaNoQSCDGrantedBefore: .trusted,
    ]

    func testTheScenarioTimesAreInTheOrderOfTheReferences() throws {
        let s = try Scenario.shared()
        XCTAssertEqual(s.signer.notBefore, s.times.signerNotBefore)
        XCTAssertEqual(s.signer.issuerCommonName, TrustScenarioLists.caName)
        XCTAssertLessThan(s.times.firstListed, s.times.dayBeforeSigner)
        XCTAssertLessThan(s.times.dayAfterSigner, s.times.switchover)
        XCTAssertLessThan(s.times.switchover, s.times.eveningBeforeTimeStamp)
        XCTAssertLessThan(s.times.hoursBeforeTimeStamp, s.times.timeStamp)
    }

    func testEveryScenarioHasAnExpectation() {
        XCTAssertEqual(TrustListScenario.allCases.count, 25)
        XCTAssertEqual(Set(Self.expectations.keys), Set(TrustListScenario.allCases))
    }

    func testEveryScenarioGivesTheReferenceVerdict() throws {
        let s = try Scenario.shared()
        for scenario in TrustListScenario.allCases {
            let store = try s.store(scenario)
            XCTAssertEqual(store.warnings, [], scenario.rawValue)
            let problems = signatureProblems(store, s)
            XCTAssertEqual(problems.isEmpty, scenario.referenceValid, "\(scenario): \(problems)")
            if case .trusted = Self.expectations[scenario] { XCTAssertEqual(problems, [], scenario.rawValue) }
            else { XCTAssertFalse(problems.isEmpty, scenario.rawValue) }
        }
    }

    func testEachFailingScenarioFailsInItsRoleForItsReason() throws {
        let s = try Scenario.shared()
        for scenario in TrustListScenario.allCases {
            guard case .fails(let role, let reason, let grantedFrom) = Self.expectations[scenario] else { continue }
            let store = try s.store(scenario)
            let (certificate, time) = checked(role, s)[0]
            XCTAssertThrowsError(try store.trust(certificate, as: role, intermediates: [s.issuingCA], at: time), scenario.rawValue) { error in
                guard let failure = error as? TrustFailure else { return XCTFail("\(scenario): \(error)") }
                XCTAssertEqual(failure.role, role, scenario.rawValue)
                XCTAssertEqual(failure.reason, reason, "\(scenario): \(failure)")
                XCTAssertEqual(failure.grantedFrom, grantedFrom.map { $0.date(s.times) }, "\(scenario): \(failure)")
                XCTAssertNotNil(failure.service, scenario.rawValue)
            }
            // Only the role the scenario is about breaks.
            for other in [TrustRole.signerIssuer, .timeStampAuthority, .ocspResponder] where other != role {
                XCTAssertEqual(problems(of: other, in: store, s), [], "\(scenario): \(other)")
            }
        }
    }

    func testQualifierScenariosOverrideTheCertificatesOwnStatements() throws {
        let s = try Scenario.shared()
        // The signer certificate itself states QcCompliance and QcSSCD.
        let own = Qualification.of(s.signer, qualifications: [])
        XCTAssertTrue(own.isQCCompliant && own.isQSCD)
        for scenario in TrustListScenario.allCases {
            guard case .notQualified(let qc, let qscd, let failsAt) = Self.expectations[scenario] else { continue }
            let store = try s.store(scenario)
            for time in [Moment.signerNotBefore, .timeStamp] {
                let qualification = try store.qualification(of: s.signer, at: time.date(s.times))
                guard failsAt.contains(time) else {
                    XCTAssertTrue(qualification.meetsRequirements, "\(scenario) at \(time): \(qualification)")
                    continue
                }
                XCTAssertEqual(qualification.isQCCompliant, qc, "\(scenario): \(qualification)")
                XCTAssertEqual(qualification.isQSCD, qscd, "\(scenario): \(qualification)")
                XCTAssertFalse(qualification.meetsRequirements, scenario.rawValue)
            }
        }
        let noQSCD = try s.store(.noQSCD).qualification(of: s.signer, at: s.signerNotBefore)
        XCTAssertEqual(noQSCD.description, "does not meet the qualification requirements (the certificate states QcCompliance; "
                       + "the certificate states QcSSCD; the trusted list says QCNoQSCD; the trusted list says QCStatement)")
    }

    func testGrantedBeforeScenariosTrustAtTheHistoricalTimeWithTheQualifiersOfThen() throws {
        let s = try Scenario.shared()
        let store = try s.store(.caNoQSCDGrantedBefore)
        let path = try store.signerIssuer(of: s.signer, intermediates: [s.issuingCA], at: s.signerNotBefore)
        XCTAssertEqual(path.certificates.map(\.der), [s.signer.der, s.issuingCA.der])
        guard case .trustedList(let service) = path.source else { return XCTFail("trusted by \(path.source)") }
        XCTAssertEqual(service.name, TrustScenarioLists.caName)
        XCTAssertEqual(service.listName, "EE_T (sequence \(TrustScenarioLists.sequence))")
        XCTAssertEqual(service.period.type, .qualifiedCA)
        XCTAssertEqual(service.period.status.description, "undersupervision")
        XCTAssertEqual(service.period.start, s.times.hoursBeforeSigner)
        XCTAssertEqual(service.period.qualifications.flatMap(\.qualifiers),
                       [Qualification.Qualifier.qcWithSSCD, Qualification.Qualifier.qcStatement])
        XCTAssertTrue(path.qualification.meetsRequirements)
        // Before that entry the service was CA/PKC, so a certificate issued then would not be trusted.
        XCTAssertThrowsError(try store.signerIssuer(of: s.signer, at: s.times.hoursBeforeSigner - 1))
    }

    func testFailureSentencesNameTheServiceTheTimeAndTheStatus() throws {
        let s = try Scenario.shared()
        func sentence(_ scenario: TrustListScenario, _ role: TrustRole, _ certificate: Certificate, _ time: Date) throws -> String {
            do {
                _ = try s.store(scenario).trust(certificate, as: role, at: time)
                return "trusted"
            } catch {
                return "\(error)"
            }
        }
        let t = s.times, at = TestTime.string
        XCTAssertEqual(try sentence(.caNonQA, .signerIssuer, s.signer, t.signerNotBefore),
                       "issuer TEST of ESTEID-LIKE 2025 is not a qualified CA (CA/QC) in the trusted list at \(at(t.signerNotBefore)): "
                       + "it is listed as CA/PKC")
        XCTAssertEqual(try sentence(.caWithdrawnGrantedLater, .signerIssuer, s.signer, t.signerNotBefore),
                       "issuer TEST of ESTEID-LIKE 2025 was not granted at \(at(t.signerNotBefore)): its trusted-list status was "
                       + "supervisionrevoked since \(at(t.dayBeforeSigner)); it is trusted for this only from \(at(t.dayAfterSigner))")
        XCTAssertEqual(try sentence(.ocspGrantedLater, .ocspResponder, s.ocspResponder, t.timeStamp),
                       "OCSP responder TEST of asicfs OCSP RESPONDER 2025 was not granted at \(at(t.timeStamp)): "
                       + "the trusted list has no status for it before \(at(t.hoursAfterTimeStamp))")
        XCTAssertEqual(try sentence(.tsaWithdrawn, .timeStampAuthority, s.timeStampAuthority, t.timeStamp),
                       "time-stamping authority TEST of asicfs TSA 2025 was not granted at \(at(t.timeStamp)): "
                       + "its trusted-list status was withdrawn since \(at(t.eveningBeforeTimeStamp))")
    }

    // MARK: - Helpers

    /// The certificate and time each role is checked at, as libdigidocpp checks a signature.
    func checked(_ role: TrustRole, _ s: Scenario) -> [(Certificate, Date)] {
        switch role {
        case .signerIssuer: [(s.signer, s.signerNotBefore), (s.signer, s.timeStampTime)]
        case .timeStampAuthority: [(s.timeStampAuthority, s.timeStampTime)]
        case .ocspResponder: [(s.ocspResponder, s.ocspProducedAt)]
        }
    }

    /// What stops the scenario's signature from validating with this store.
    func signatureProblems(_ store: TrustStore, _ s: Scenario) -> [String] {
        var found = [TrustRole.signerIssuer, .timeStampAuthority, .ocspResponder].flatMap { problems(of: $0, in: store, s) }
        for time in [s.signerNotBefore, s.timeStampTime] {
            if let qualification = try? store.qualification(of: s.signer, intermediates: [s.issuingCA], at: time),
               !qualification.meetsRequirements {
                found.append("signer \(qualification)")
            }
        }
        return found
    }

    func problems(of role: TrustRole, in store: TrustStore, _ s: Scenario) -> [String] {
        checked(role, s).compactMap { certificate, time -> String? in
            do {
                _ = try store.trust(certificate, as: role, intermediates: [s.issuingCA], at: time)
                return nil
            } catch {
                return "\(error)"
            }
        }
    }
}

import Crypto
import Foundation
import TestTools
import Trust
import XCTest

/// How a certificate reaches a listed service: itself, its issuer, or through intermediates.
final class TrustPathTests: XCTestCase {
    /// A hand-made list with one CA/QC service listing `certificate`, granted from `start`.
    func storeListing(_ certificate: Certificate, from start: Date) -> TrustStore {
        let service = TrustService(providerName: "asicfs test", name: certificate.commonName ?? "", certificates: [certificate],
                                   periods: [ServicePeriod(type: .qualifiedCA, status: .granted, start: start)])
        let list = TrustedList(territory: "XX", sequenceNumber: 1, type: TestTrustedList.genericType,
                               operatorName: "test", issueDate: nil, nextUpdate: nil, pointers: [], services: [service],
                               source: "test")
        return TrustStore(lists: [list])
    }

    func testIntermediatesLeadToAListedCA() throws {
        let s = try Scenario.shared()
        // The root is listed; the signer's issuer is not.
        let store = storeListing(s.root, from: s.times.switchover)
        let path = try store.signerIssuer(of: s.signer, intermediates: [s.issuingCA], at: s.timeStampTime)
        XCTAssertEqual(path.certificates.map { $0.commonName ?? "" },
                       ["JÕEORG,JAAK-KRISTJAN,38001085718", "TEST of ESTEID-LIKE 2025", "TEST of asicfs Root CA 2025"])
        XCTAssertThrowsError(try store.signerIssuer(of: s.signer, at: s.timeStampTime)) { error in
            XCTAssertEqual((error as? TrustFailure)?.reason, .unknown)
        }
        XCTAssertThrowsError(try store.signerIssuer(of: s.signer, intermediates: [s.issuingCA], at: s.times.switchover - 1)) { error in
            XCTAssertEqual((error as? TrustFailure)?.reason, .notYetListed)
        }
    }

    func testTheNearestListedLevelDecides() throws {
        // The base list lists the signer's issuing CA itself as CA/QC: no intermediates are needed.
        let s = try Scenario.shared()
        let path = try s.store(.base).signerIssuer(of: s.signer, at: s.timeStampTime)
        XCTAssertEqual(path.certificates.map(\.der), [s.signer.der, s.issuingCA.der])
    }

    func testACertificateIssuedByAGrantedQualifiedCAIsADelegatedOCSPResponder() throws {
        let s = try Scenario.shared()
        let store = try s.store(.base)
        // Not listed itself, but issued by the CA/QC service: libdigidocpp accepts that.
        let path = try store.ocspResponder(s.signer, at: s.ocspProducedAt)
        XCTAssertEqual(path.certificates.map(\.der), [s.signer.der, s.issuingCA.der])
        // A CA/QC does not make a time-stamping authority, though.
        XCTAssertThrowsError(try store.timeStampAuthority(s.signer, at: s.timeStampTime)) { error in
            XCTAssertEqual((error as? TrustFailure)?.reason, .otherServiceType(.qualifiedCA))
        }
    }

    func testAListedCertificateMustBeValidAtTheTimeAsked() throws {
        let s = try Scenario.shared()
        let store = try s.store(.base)
        // The TSA's certificate has expired by then; its service is still granted.
        let expired = try XCTUnwrap(s.timeStampAuthority.notAfter) + TrustScenarioTimes.day
        XCTAssertThrowsError(try store.timeStampAuthority(s.timeStampAuthority, at: expired)) { error in
            XCTAssertEqual((error as? TrustFailure)?.reason, .pathInvalid("certificate has expired"))
            XCTAssertEqual("\(error)", "time-stamping authority TEST of asicfs TSA 2025 is listed, but the certificate does not verify "
                           + "against it at \(TestTime.string(expired)): certificate has expired")
        }
        XCTAssertNoThrow(try store.timeStampAuthority(s.timeStampAuthority, at: s.timeStampTime))
    }
}

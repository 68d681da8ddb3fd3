import Crypto
import Foundation
import Trust
import XCTest

/// How a certificate reaches a listed service: itself, its issuer, or through intermediates.
final class TrustPathTests: XCTestCase {
    /// libdigidocpp's own test PKI: libdigidocpp CA → libdigidocpp Inter → signer1.
    func signer1() throws -> Certificate {
        try PKCS12Identity(bytes: Corpus.bytes("signer1.p12"), passphrase: SecretBytes(Array("signer1".utf8)),
                           name: "signer1.p12").certificate
    }

    /// A hand-made list with one CA/QC service listing `certificate`, granted from 2024-01-01.
    func storeListing(_ certificate: Certificate) -> TrustStore {
        let service = TrustService(providerName: "libdigidocpp", name: certificate.commonName ?? "", certificates: [certificate],
                                   periods: [ServicePeriod(type: .qualifiedCA, status: .granted,
                                                           start: Corpus.date("2024-01-01T00:00:00Z"))])
        let list = TrustedList(territory: "XX", sequenceNumber: 1, type: "http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric",
                               operatorName: "test", issueDate: nil, nextUpdate: nil, pointers: [], services: [service],
                               source: "test")
        return TrustStore(lists: [list])
    }

    func testIntermediatesLeadToAListedCA() throws {
        let root = try TrustAnchorFiles.certificates(inFile: Corpus.path("ca.crt"))[0]
        let inter = try TrustAnchorFiles.certificates(inFile: Corpus.path("inter.crt"))[0]
        let store = storeListing(root)
        let time = Corpus.date("2025-01-01T00:00:00Z")
        let path = try store.signerIssuer(of: signer1(), intermediates: [inter], at: time)
        XCTAssertEqual(path.certificates.map { $0.commonName ?? "" }, ["signer1", "libdigidocpp Inter", "libdigidocpp CA"])
        XCTAssertThrowsError(try store.signerIssuer(of: signer1(), at: time)) { error in
            XCTAssertEqual((error as? TrustFailure)?.reason, .unknown)
        }
        XCTAssertThrowsError(try store.signerIssuer(of: signer1(), intermediates: [inter], at: Corpus.date("2023-12-31T23:59:59Z"))) { error in
            XCTAssertEqual((error as? TrustFailure)?.reason, .notYetListed)
        }
    }

    func testTheNearestListedLevelDecides() throws {
        // EE_T.xml lists libdigidocpp Inter itself as CA/QC: signer1 needs no intermediates there.
        let store = try Corpus.store(withList: "EE_T.xml")
        let path = try store.signerIssuer(of: signer1(), at: Corpus.date("2025-01-01T00:00:00Z"))
        XCTAssertEqual(path.certificates.map { $0.commonName ?? "" }, ["signer1", "libdigidocpp Inter"])
    }

    func testACertificateIssuedByAGrantedQualifiedCAIsADelegatedOCSPResponder() throws {
        let store = try Corpus.store(withList: "EE_T.xml")
        // Not listed itself, but issued by TEST of ESTEID-SK 2011 (CA/QC): libdigidocpp accepts that.
        let path = try store.ocspResponder(TslAsice.signer, at: Corpus.ocspProducedAt)
        XCTAssertEqual(path.certificates.map(\.der), [TslAsice.signer.der, TslAsice.issuingCA.der])
        // A CA/QC does not make a time-stamping authority, though.
        XCTAssertThrowsError(try store.timeStampAuthority(TslAsice.signer, at: Corpus.timeStampTime)) { error in
            XCTAssertEqual((error as? TrustFailure)?.reason, .otherServiceType(.qualifiedCA))
        }
    }

    func testAListedCertificateMustBeValidAtTheTimeAsked() throws {
        let store = try Corpus.store(withList: "EE_T.xml")
        // DEMO of SK TSA 2014 expired on 2024-09-02; its service is still granted.
        XCTAssertThrowsError(try store.timeStampAuthority(TslAsice.timeStampAuthority, at: Corpus.date("2025-01-01T00:00:00Z"))) { error in
            XCTAssertEqual((error as? TrustFailure)?.reason, .pathInvalid("certificate has expired"))
            XCTAssertEqual("\(error)", "time-stamping authority DEMO of SK TSA 2014 is listed, but the certificate does not verify "
                           + "against it at 2025-01-01T00:00:00Z: certificate has expired")
        }
    }
}

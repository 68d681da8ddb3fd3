import Crypto
import Foundation
import Trust
import XCTest

/// Plain trust anchors (test PKIs): loaded from a PEM file or a folder, trusted for every role
/// at every time, with qualification taken from the certificate alone.
final class TrustAnchorTests: XCTestCase {
    func testAnchorsAreLoadedFromAFolderOfPEMAndCRTFiles() throws {
        let folder = try temporaryFolder(self)
        try write(Array((TslAsice.issuingCAPEM + "\n" + TslAsice.timeStampAuthorityPEM + "\n").utf8), to: folder + "/sk.pem")
        try write(Corpus.bytes("TSL.crt"), to: folder + "/tsl.crt")
        try write(TslAsice.ocspResponder.der, to: folder + "/responder.cer")
        try write(Array("not a certificate".utf8), to: folder + "/README.txt")
        let anchors = try TrustAnchorFiles.load(folder)
        XCTAssertEqual(anchors.map { $0.commonName ?? "" },
                       ["TEST of SK OCSP RESPONDER 2011", "TEST of ESTEID-SK 2011", "DEMO of SK TSA 2014", "Test TSL"])
    }

    func testAnchorsAreTrustedForEveryRoleAtAnyTime() throws {
        let folder = try temporaryFolder(self)
        try write(Array((TslAsice.issuingCAPEM + "\n" + TslAsice.timeStampAuthorityPEM + "\n" + TslAsice.ocspResponderPEM).utf8),
                  to: folder + "/anchors.pem")
        let anchors = try TrustAnchorFiles.load(folder)
        let store = try TrustStore.load(TrustSettings(tsl: nil, tslCerts: [], trustAnchors: anchors, cacheDir: folder))

        let signer = try store.signerIssuer(of: TslAsice.signer, at: Corpus.signerNotBefore)
        XCTAssertEqual(signer.certificates.map(\.der), [TslAsice.signer.der, TslAsice.issuingCA.der])
        guard case .trustAnchor(let anchor) = signer.source else { return XCTFail("trusted by \(signer.source)") }
        XCTAssertEqual(anchor.der, TslAsice.issuingCA.der)
        XCTAssertTrue(signer.qualifications.isEmpty)
        XCTAssertNoThrow(try store.signerIssuer(of: TslAsice.signer, at: Corpus.timeStampTime))
        XCTAssertNoThrow(try store.timeStampAuthority(TslAsice.timeStampAuthority, at: Corpus.timeStampTime))
        XCTAssertNoThrow(try store.ocspResponder(TslAsice.ocspResponder, at: Corpus.ocspProducedAt))

        // Qualification from the certificate alone: it states QcCompliance and QcSSCD.
        let qualification = try store.qualification(of: TslAsice.signer, at: Corpus.signerNotBefore)
        XCTAssertTrue(qualification.isQCCompliant)
        XCTAssertTrue(qualification.isQSCD)
        XCTAssertTrue(qualification.meetsRequirements)
        XCTAssertEqual(qualification.reasons, ["the certificate states QcCompliance", "the certificate states QcSSCD"])
    }

    func testAnchorsStillCheckTheCertificatePeriod() throws {
        let store = TrustStore(lists: [], anchors: [TslAsice.issuingCA])
        // The signer certificate expired on 2018-01-29.
        XCTAssertThrowsError(try store.signerIssuer(of: TslAsice.signer, at: Corpus.date("2020-01-01T00:00:00Z"))) { error in
            XCTAssertEqual((error as? TrustFailure)?.reason, .unknown)
        }
    }

    func testAnchorsAndTrustedListsAddUp() throws {
        var settings = TrustSettings(tsl: Corpus.path("EE_T-TSA-withdrawn.xml"), tslCerts: [try Corpus.tslCertificate()],
                                     trustAnchors: [TslAsice.timeStampAuthority], cacheDir: try temporaryFolder(self), now: Corpus.now)
        let store = try TrustStore.load(settings)
        XCTAssertNoThrow(try store.timeStampAuthority(TslAsice.timeStampAuthority, at: Corpus.timeStampTime))
        XCTAssertNoThrow(try store.signerIssuer(of: TslAsice.signer, at: Corpus.signerNotBefore))
        settings.trustAnchors = []
        XCTAssertThrowsError(try TrustStore.load(settings).timeStampAuthority(TslAsice.timeStampAuthority, at: Corpus.timeStampTime))
    }

    func testMissingOrEmptyAnchorLocationsAreErrors() throws {
        let folder = try temporaryFolder(self)
        XCTAssertThrowsError(try TrustAnchorFiles.load(folder)) { error in
            XCTAssertEqual("\(error)", "\(folder): the folder holds no .pem, .crt or .cer certificate")
        }
        XCTAssertThrowsError(try TrustAnchorFiles.load(folder + "/missing.pem")) { error in
            XCTAssertEqual("\(error)", "\(folder)/missing.pem: no such file or folder")
        }
        try write(Array("hello".utf8), to: folder + "/junk.pem")
        XCTAssertThrowsError(try TrustAnchorFiles.load(folder + "/junk.pem")) { error in
            XCTAssertEqual("\(error)", "\(folder)/junk.pem: no certificate in it (neither PEM nor DER)")
        }
    }
}

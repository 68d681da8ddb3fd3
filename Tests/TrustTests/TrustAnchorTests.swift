import Crypto
import Foundation
import TestTools
import Trust
import XCTest

/// Plain trust anchors (test PKIs): loaded from a PEM file or a folder, trusted for every role
/// at every time, with qualification taken from the certificate alone.
final class TrustAnchorTests: XCTestCase {
    func pem(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    func testAnchorsAreLoadedFromAFolderOfPEMAndCRTFiles() throws {
        let s = try Scenario.shared()
        let folder = try temporaryFolder(self)
        try write(Array((try pem(s.pki.issuing) + "\n" + pem(s.pki.tsa) + "\n").utf8), to: folder + "/ca.pem")
        try write(Array(try pem(s.pki.tlSigner).utf8), to: folder + "/tsl.crt")
        try write(s.ocspResponder.der, to: folder + "/responder.cer")
        try write(Array("not a certificate".utf8), to: folder + "/README.txt")
        let anchors = try TrustAnchorFiles.load(folder)
        XCTAssertEqual(anchors.map { $0.commonName ?? "" },
                       ["TEST of ESTEID-LIKE 2025", "TEST of asicfs TSA 2025", "TEST of asicfs OCSP RESPONDER 2025",
                        "TEST of asicfs tl-signer"])
    }

    func testAnchorsAreTrustedForEveryRoleAtAnyTime() throws {
        let s = try Scenario.shared()
        let folder = try temporaryFolder(self)
        try write(Array((try pem(s.pki.issuing) + "\n" + pem(s.pki.tsa) + "\n" + pem(s.pki.ocsp)).utf8), to: folder + "/anchors.pem")
        let anchors = try TrustAnchorFiles.load(folder)
        let store = try TrustStore.load(TrustSettings(tsl: nil, tslCerts: [], trustAnchors: anchors, cacheDir: folder))

        let signer = try store.signerIssuer(of: s.signer, at: s.signerNotBefore)
        XCTAssertEqual(signer.certificates.map(\.der), [s.signer.der, s.issuingCA.der])
        guard case .trustAnchor(let anchor) = signer.source else { return XCTFail("trusted by \(signer.source)") }
        XCTAssertEqual(anchor.der, s.issuingCA.der)
        XCTAssertTrue(signer.qualifications.isEmpty)
        XCTAssertNoThrow(try store.signerIssuer(of: s.signer, at: s.timeStampTime))
        XCTAssertNoThrow(try store.timeStampAuthority(s.timeStampAuthority, at: s.timeStampTime))
        XCTAssertNoThrow(try store.ocspResponder(s.ocspResponder, at: s.ocspProducedAt))

        // Qualification from the certificate alone: it states QcCompliance and QcSSCD.
        let qualification = try store.qualification(of: s.signer, at: s.signerNotBefore)
        XCTAssertTrue(qualification.isQCCompliant)
        XCTAssertTrue(qualification.isQSCD)
        XCTAssertTrue(qualification.meetsRequirements)
        XCTAssertEqual(qualification.reasons, ["the certificate states QcCompliance", "the certificate states QcSSCD"])
    }

    func testAnchorsStillCheckTheCertificatePeriod() throws {
        let s = try Scenario.shared()
        let store = TrustStore(lists: [], anchors: [s.issuingCA])
        let expired = try XCTUnwrap(s.signer.notAfter) + TrustScenarioTimes.day
        XCTAssertThrowsError(try store.signerIssuer(of: s.signer, at: expired)) { error in
            XCTAssertEqual((error as? TrustFailure)?.reason, .unknown)
        }
        XCTAssertThrowsError(try store.signerIssuer(of: s.signer, at: s.signerNotBefore - 1))
        XCTAssertNoThrow(try store.signerIssuer(of: s.signer, at: s.signerNotBefore))
    }

    func testAnchorsAndTrustedListsAddUp() throws {
        let s = try Scenario.shared()
        var settings = TrustSettings(tsl: try s.path(.tsaWithdrawn), tslCerts: [s.tlSigner],
                                     trustAnchors: [s.timeStampAuthority], cacheDir: try temporaryFolder(self), now: s.times.now)
        let store = try TrustStore.load(settings)
        XCTAssertNoThrow(try store.timeStampAuthority(s.timeStampAuthority, at: s.timeStampTime))
        XCTAssertNoThrow(try store.signerIssuer(of: s.signer, at: s.signerNotBefore))
        settings.trustAnchors = []
        XCTAssertThrowsError(try TrustStore.load(settings).timeStampAuthority(s.timeStampAuthority, at: s.timeStampTime))
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

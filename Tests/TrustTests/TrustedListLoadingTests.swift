import Crypto
import Foundation
import Trust
import XCTest

/// Loading the conformance lists: the LOTL TSL.xml, its pointer to EE_T.xml, signatures and refusals.
final class TrustedListLoadingTests: XCTestCase {
    func testConformanceLOTLReachesEE_TThroughItsPointer() throws {
        let tslCert = try Corpus.tslCertificate()
        let store = try TrustStore.load(TrustSettings(tsl: Corpus.path("TSL.xml"), tslCerts: [tslCert],
                                                      cacheDir: try temporaryFolder(self), now: Corpus.now))
        XCTAssertEqual(store.warnings, [])
        XCTAssertEqual(store.lists.count, 2)
        let lotl = store.lists[0], national = store.lists[1]
        XCTAssertTrue(lotl.isListOfLists)
        XCTAssertEqual(lotl.territory, "EE")
        XCTAssertEqual(lotl.sequenceNumber, 4)
        XCTAssertEqual(lotl.pointers.count, 1)
        XCTAssertEqual(lotl.pointers[0].location, "https://open-eid.github.io/test-TL/EE_T.xml")
        XCTAssertEqual(lotl.pointers[0].territory, "EE_T")
        XCTAssertEqual(lotl.pointers[0].mimeType, "application/vnd.etsi.tsl+xml")
        XCTAssertEqual(lotl.pointers[0].signers.map(\.der), [tslCert.der])
        XCTAssertTrue(lotl.services.isEmpty)

        XCTAssertFalse(national.isListOfLists)
        XCTAssertEqual(national.source, Corpus.path("EE_T.xml"))
        XCTAssertEqual(national.territory, "EE_T")
        XCTAssertEqual(national.sequenceNumber, 34)
        XCTAssertEqual(national.nextUpdate, Corpus.date("2027-08-20T21:00:00Z"))
        XCTAssertEqual(national.issueDate, Corpus.date("2026-05-11T12:22:20Z"))
        XCTAssertEqual(national.signer?.der, tslCert.der)
        XCTAssertEqual(national.services.count, 31)
        // Through the LOTL, tsl.asice's three certificates are trusted at their times.
        XCTAssertNoThrow(try store.signerIssuer(of: TslAsice.signer, at: Corpus.signerNotBefore))
        XCTAssertNoThrow(try store.timeStampAuthority(TslAsice.timeStampAuthority, at: Corpus.timeStampTime))
        XCTAssertNoThrow(try store.ocspResponder(TslAsice.ocspResponder, at: Corpus.ocspProducedAt))
    }

    func testServiceHistoryIsReadWithTypesStatusesAndQualifiers() throws {
        let list = try Corpus.store(withList: "EE_T-CA-withdrawn-granted-before.xml").lists[0]
        let service = try XCTUnwrap(list.services.first { $0.name.hasPrefix("TEST of ESTEID-SK 2011") })
        XCTAssertEqual(service.providerName, "AS Sertifitseerimiskeskus")
        XCTAssertEqual(service.certificates.map(\.der), [TslAsice.issuingCA.der])
        XCTAssertEqual(service.periods.map { "\($0.type) \($0.status)" },
                       ["CA/QC granted", "CA/QC undersupervision", "CA/QC supervisionrevoked", "CA/QC undersupervision"])
        XCTAssertEqual(service.current?.start, Corpus.date("2016-06-30T22:00:00Z"))
        XCTAssertEqual(service.period(at: Corpus.signerNotBefore)?.start, Corpus.date("2013-04-23T01:00:00Z"))
        XCTAssertNil(service.period(at: Corpus.date("2000-01-01T00:00:00Z")))
        XCTAssertEqual(service.current?.qualifications.flatMap(\.qualifiers),
                       [Qualification.Qualifier.qcWithQSCD, Qualification.Qualifier.qcStatement])
        XCTAssertEqual(service.period(at: Corpus.signerNotBefore)?.qualifications.flatMap(\.qualifiers),
                       [Qualification.Qualifier.qcWithSSCD, Qualification.Qualifier.qcStatement])
        XCTAssertEqual(service.current?.qualifications.first?.criteria.assert, "atLeastOne")
        XCTAssertEqual(service.current?.qualifications.first?.criteria.keyUsages,
                       [["digitalSignature": true], ["nonRepudiation": true]])
    }

    func testTamperedServiceNameIsRefused() throws {
        let folder = try temporaryFolder(self)
        let tampered = try replacingFirst("TEST of ESTEID-SK 2011:", with: "TEST of ESTEID-SK 2012:", in: Corpus.bytes("EE_T.xml"))
        try write(tampered, to: folder + "/EE_T.xml")
        XCTAssertThrowsError(try TrustStore.load(TrustSettings(tsl: folder + "/EE_T.xml", tslCerts: [Corpus.tslCertificate()],
                                                               cacheDir: folder, now: Corpus.now))) { error in
            XCTAssertEqual("\(error)", "trusted list \(folder)/EE_T.xml is refused: its signature does not match its content: "
                           + "the list was changed after signing")
        }
    }

    func testChangedSignatureValueOrSignedPropertiesAreRefused() throws {
        let folder = try temporaryFolder(self)
        let cases = [
            ("SignatureValue>WyFp4oe27bJS", "SignatureValue>XyFp4oe27bJS",
             "its signature value does not verify with the certificate of Test TSL"),
            ("<xades:SigningTime>2026-05-11", "<xades:SigningTime>2026-05-12",
             "its signature does not match its content: the signed part '#SignedProperties' was changed after signing"),
        ]
        for (old, new, reason) in cases {
            try write(replacingFirst(old, with: new, in: Corpus.bytes("EE_T.xml")), to: folder + "/EE_T.xml")
            XCTAssertThrowsError(try TrustStore.load(TrustSettings(tsl: folder + "/EE_T.xml", tslCerts: [Corpus.tslCertificate()],
                                                                   cacheDir: folder, now: Corpus.now))) { error in
                XCTAssertEqual("\(error)", "trusted list \(folder)/EE_T.xml is refused: \(reason)")
            }
        }
    }

    func testTamperedNationalListBehindTheLOTLIsSkippedWithAWarning() throws {
        let folder = try temporaryFolder(self)
        try write(Corpus.bytes("TSL.xml"), to: folder + "/TSL.xml")
        try write(replacingFirst("TEST of ESTEID-SK 2011:", with: "TEST of ESTEID-SK 2012:", in: Corpus.bytes("EE_T.xml")),
                  to: folder + "/EE_T.xml")
        let store = try TrustStore.load(TrustSettings(tsl: folder + "/TSL.xml", tslCerts: [Corpus.tslCertificate()],
                                                      cacheDir: folder + "/cache", now: Corpus.now))
        XCTAssertEqual(store.lists.map(\.territory), ["EE"])
        XCTAssertEqual(store.warnings, ["trusted list \(folder)/EE_T.xml is refused: its signature does not match its content: "
                                        + "the list was changed after signing; its services are not trusted"])
        XCTAssertThrowsError(try store.signerIssuer(of: TslAsice.signer, at: Corpus.signerNotBefore)) { error in
            XCTAssertEqual((error as? TrustFailure)?.reason, .unknown)
        }
    }

    func testTamperedLOTLIsRefused() throws {
        let folder = try temporaryFolder(self)
        try write(replacingFirst("SK Test Authority", with: "SK Test Authorit_", in: Corpus.bytes("TSL.xml")), to: folder + "/TSL.xml")
        try write(Corpus.bytes("EE_T.xml"), to: folder + "/EE_T.xml")
        XCTAssertThrowsError(try TrustStore.load(TrustSettings(tsl: folder + "/TSL.xml", tslCerts: [Corpus.tslCertificate()],
                                                               cacheDir: folder, now: Corpus.now))) { error in
            XCTAssertTrue("\(error)".hasSuffix("is refused: its signature does not match its content: the list was changed after signing"),
                          "\(error)")
        }
    }

    func testListSignedBySomeoneElseIsRefused() throws {
        let other = try TrustAnchorFiles.certificates(inFile: Corpus.path("inter.crt"))
        XCTAssertThrowsError(try TrustStore.load(TrustSettings(tsl: Corpus.path("TSL.xml"), tslCerts: other,
                                                               cacheDir: try temporaryFolder(self), now: Corpus.now))) { error in
            XCTAssertEqual("\(error)", "trusted list \(Corpus.path("TSL.xml")) is refused: it is signed by Test TSL, "
                           + "which is not an allowed signer (allowed: libdigidocpp Inter)")
        }
    }

    func testListWithoutTslCertIsRefused() throws {
        XCTAssertThrowsError(try TrustStore.load(TrustSettings(tsl: Corpus.path("EE_T.xml"), tslCerts: [],
                                                               cacheDir: try temporaryFolder(self)))) { error in
            XCTAssertTrue("\(error)".contains("no tsl-cert is configured"), "\(error)")
        }
    }

    func testExpiredListIsUsedWithAWarning() throws {
        let store = try TrustStore.load(TrustSettings(tsl: Corpus.path("EE_T.xml"), tslCerts: [Corpus.tslCertificate()],
                                                      cacheDir: try temporaryFolder(self),
                                                      now: Corpus.date("2028-01-01T00:00:00Z")))
        XCTAssertEqual(store.lists.count, 1)
        XCTAssertEqual(store.warnings, ["trusted list EE_T (sequence 34) from \(Corpus.path("EE_T.xml")) expired on "
                                        + "2027-08-20T21:00:00Z (its NextUpdate); it is still used"])
        XCTAssertNoThrow(try store.signerIssuer(of: TslAsice.signer, at: Corpus.signerNotBefore))
    }

    func testPointedListIsLookedForInTheCacheFolder() throws {
        let folder = try temporaryFolder(self)
        try FileManager.default.createDirectory(atPath: folder + "/lotl", withIntermediateDirectories: true)
        try write(Corpus.bytes("TSL.xml"), to: folder + "/lotl/TSL.xml")
        let settings = try TrustSettings(tsl: folder + "/lotl/TSL.xml", tslCerts: [Corpus.tslCertificate()],
                                     cacheDir: folder + "/cache", now: Corpus.now)
        // Neither beside the LOTL nor in the cache, and no downloading: a warning, not a failure.
        let without = try TrustStore.load(settings)
        XCTAssertEqual(without.lists.count, 1)
        XCTAssertEqual(without.warnings, ["trusted list https://open-eid.github.io/test-TL/EE_T.xml is not available: it is not in "
                                          + "\(folder)/lotl/EE_T.xml or \(folder)/cache/EE_T.xml and downloading is not configured;"
                                          + " its services are not trusted"])
        try FileManager.default.createDirectory(atPath: folder + "/cache", withIntermediateDirectories: true)
        try write(Corpus.bytes("EE_T.xml"), to: folder + "/cache/EE_T.xml")
        let with = try TrustStore.load(settings)
        XCTAssertEqual(with.lists.map(\.territory), ["EE", "EE_T"])
        XCTAssertEqual(with.warnings, [])
    }

    func testListsByURLAreDownloadedOnceAndThenReadFromTheCache() throws {
        let cache = try temporaryFolder(self) + "/cache"
        let served = ["tl-mp-test-EE.xml": try Corpus.bytes("TSL.xml"), "EE_T.xml": try Corpus.bytes("EE_T.xml")]
        let requests = RequestLog()
        var settings = try TrustSettings(tsl: "https://open-eid.github.io/test-TL/tl-mp-test-EE.xml",
                                     tslCerts: [Corpus.tslCertificate()], cacheDir: cache, now: Corpus.now)
        settings.download = { url in
            requests.append(url)
            guard let bytes = served[String(url.split(separator: "/").last ?? "")] else { throw TrustedListError("404") }
            return bytes
        }
        let first = try TrustStore.load(settings)
        XCTAssertEqual(first.lists.map(\.territory), ["EE", "EE_T"])
        XCTAssertEqual(requests.urls, ["https://open-eid.github.io/test-TL/tl-mp-test-EE.xml",
                                       "https://open-eid.github.io/test-TL/EE_T.xml"])
        XCTAssertEqual(FileManager.default.contents(atPath: cache + "/EE_T.xml").map(Array.init), served["EE_T.xml"])

        let second = try TrustStore.load(settings)
        XCTAssertEqual(second.lists.map(\.territory), ["EE", "EE_T"])
        XCTAssertEqual(requests.urls.count, 2, "fresh cached copies are not downloaded again")

        // Past NextUpdate the lists are fetched again; when that fails the stale copy is used, with a warning.
        settings.now = Corpus.date("2028-01-01T00:00:00Z")
        settings.download = { _ in throw TrustedListError("could not connect to open-eid.github.io") }
        let offline = try TrustStore.load(settings)
        XCTAssertEqual(offline.lists.map(\.territory), ["EE", "EE_T"])
        XCTAssertTrue(offline.warnings.contains("could not connect to open-eid.github.io; the cached copy \(cache)/EE_T.xml is used instead"),
                      "\(offline.warnings)")
        XCTAssertEqual(offline.warnings.filter { $0.contains("expired on") }.count, 2)
    }

    func testDownloadedListWithABadSignatureIsNotCached() throws {
        let cache = try temporaryFolder(self) + "/cache"
        let tampered = try replacingFirst("TEST of ESTEID-SK 2011:", with: "TEST of ESTEID-SK 2012:", in: Corpus.bytes("EE_T.xml"))
        var settings = try TrustSettings(tsl: "https://example.test/EE_T.xml", tslCerts: [Corpus.tslCertificate()],
                                     cacheDir: cache, now: Corpus.now)
        settings.download = { _ in tampered }
        XCTAssertThrowsError(try TrustStore.load(settings)) { error in
            XCTAssertTrue("\(error)".contains("was changed after signing"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: cache + "/EE_T.xml"))
    }

    func testWithoutAListOnlyTrustAnchorsCount() throws {
        let store = try TrustStore.load(TrustSettings(tsl: nil, tslCerts: [], trustAnchors: [], cacheDir: try temporaryFolder(self)))
        XCTAssertTrue(store.lists.isEmpty)
        XCTAssertThrowsError(try store.signerIssuer(of: TslAsice.signer, at: Corpus.signerNotBefore)) { error in
            XCTAssertEqual("\(error)", "issuer TEST of ESTEID-SK 2011 is unknown: no trusted list lists it and it is no trust anchor")
        }
    }
}

/// The URLs a fake download was asked for (the closure is @Sendable).
final class RequestLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ url: String) { lock.withLock { list.append(url) } }
    var urls: [String] { lock.withLock { list } }
}

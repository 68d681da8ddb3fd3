import Crypto
import Foundation
import TestTools
import Trust
import XCTest

/// Loading test lists signed with xmlsec1 (contrib/testpki/mktrustlist.py): a list of lists,
/// its pointer to the national list, signatures and refusals, the cache and downloading.
final class TrustedListLoadingTests: XCTestCase {
    let url = Scenario.nationalListURL
    let lotlURL = "https://asicfs.invalid/test-TL/tl-mp-test-EE.xml"

    func testListOfListsReachesTheNationalListThroughItsPointer() throws {
        let s = try Scenario.shared()
        let store = try TrustStore.load(TrustSettings(tsl: s.listOfListsPath(), tslCerts: [s.lotlSigner],
                                                      cacheDir: try temporaryFolder(self), now: s.times.now))
        XCTAssertEqual(store.warnings, [])
        XCTAssertEqual(store.lists.count, 2)
        let lotl = store.lists[0], national = store.lists[1]
        XCTAssertTrue(lotl.isListOfLists)
        XCTAssertEqual(lotl.territory, "EE")
        XCTAssertEqual(lotl.sequenceNumber, 4)
        XCTAssertEqual(lotl.signer?.der, s.lotlSigner.der)
        XCTAssertEqual(lotl.pointers.count, 1)
        XCTAssertEqual(lotl.pointers[0].location, url)
        XCTAssertEqual(lotl.pointers[0].territory, "EE_T")
        XCTAssertEqual(lotl.pointers[0].mimeType, "application/vnd.etsi.tsl+xml")
        XCTAssertEqual(lotl.pointers[0].signers.map(\.der), [s.tlSigner.der])
        XCTAssertTrue(lotl.services.isEmpty)

        XCTAssertFalse(national.isListOfLists)
        XCTAssertEqual(national.source, try s.path(.base))
        XCTAssertEqual(national.territory, "EE_T")
        XCTAssertEqual(national.sequenceNumber, TrustScenarioLists.sequence)
        XCTAssertEqual(national.nextUpdate, s.times.now + 365 * TrustScenarioTimes.day)
        XCTAssertEqual(national.issueDate, s.times.now - TrustScenarioTimes.day)
        XCTAssertEqual(national.signer?.der, s.tlSigner.der)
        XCTAssertEqual(national.services.map(\.name), [TrustScenarioLists.caName, TrustScenarioLists.ocspName,
                                                       TrustScenarioLists.tsaName, "TEST of an unrelated CA"])
        // Through the list of lists, the signature's three certificates are trusted at their times.
        XCTAssertNoThrow(try store.signerIssuer(of: s.signer, at: s.signerNotBefore))
        XCTAssertNoThrow(try store.timeStampAuthority(s.timeStampAuthority, at: s.timeStampTime))
        XCTAssertNoThrow(try store.ocspResponder(s.ocspResponder, at: s.ocspProducedAt))
    }

    func testServiceHistoryIsReadWithTypesStatusesAndQualifiers() throws {
        let s = try Scenario.shared()
        let list = try s.store(.caWithdrawnGrantedBefore).lists[0]
        let service = try XCTUnwrap(list.services.first { $0.name == TrustScenarioLists.caName })
        XCTAssertEqual(service.providerName, "asicfs test services")
        XCTAssertEqual(service.certificates.map(\.der), [s.issuingCA.der])
        XCTAssertEqual(service.periods.map { "\($0.type) \($0.status)" },
                       ["CA/QC granted", "CA/QC undersupervision", "CA/QC supervisionrevoked", "CA/QC undersupervision"])
        XCTAssertEqual(service.current?.start, s.times.switchover)
        XCTAssertEqual(service.period(at: s.signerNotBefore)?.start, s.times.hoursBeforeSigner)
        XCTAssertNil(service.period(at: s.times.firstListed - 1))
        XCTAssertEqual(service.current?.qualifications.flatMap(\.qualifiers),
                       [Qualification.Qualifier.qcWithQSCD, Qualification.Qualifier.qcStatement])
        XCTAssertEqual(service.period(at: s.signerNotBefore)?.qualifications.flatMap(\.qualifiers),
                       [Qualification.Qualifier.qcWithSSCD, Qualification.Qualifier.qcStatement])
        XCTAssertEqual(service.current?.qualifications.first?.criteria.assert, "atLeastOne")
        XCTAssertEqual(service.current?.qualifications.first?.criteria.keyUsages,
                       [["digitalSignature": true], ["nonRepudiation": true]])
    }

    /// The base list with its CA service renamed after signing.
    func tamperedNationalList(_ s: Scenario) throws -> [UInt8] {
        try replacingFirst(TrustScenarioLists.caName, with: "TEST of ESTEID-LIKE 2026", in: s.bytes(.base))
    }

    func testTamperedServiceNameIsRefused() throws {
        let s = try Scenario.shared()
        let folder = try temporaryFolder(self)
        try write(tamperedNationalList(s), to: folder + "/EE_T.xml")
        XCTAssertThrowsError(try TrustStore.load(TrustSettings(tsl: folder + "/EE_T.xml", tslCerts: [s.tlSigner],
                                                               cacheDir: folder, now: s.times.now))) { error in
            XCTAssertEqual("\(error)", "trusted list \(folder)/EE_T.xml is refused: its signature does not match its content: "
                           + "the list was changed after signing")
        }
    }

    func testChangedSignatureValueOrSignedPropertiesAreRefused() throws {
        let s = try Scenario.shared()
        let folder = try temporaryFolder(self)
        let bytes = try s.bytes(.base)
        // The value's first base64 character, whatever this run's key made it.
        let text = String(decoding: bytes, as: UTF8.self)
        let valueStart = try XCTUnwrap(text.range(of: "SignatureValue>")).upperBound
        let first = text[valueStart]
        let signingTime = TestTime.string(s.times.now - TrustScenarioTimes.day)
        let cases = [
            ("SignatureValue>\(first)", "SignatureValue>\(first == "A" ? "B" : "A")",
             "its signature value does not verify with the certificate of TEST of asicfs tl-signer"),
            ("<xades:SigningTime>\(signingTime)", "<xades:SigningTime>\(TestTime.string(s.times.now))",
             "its signature does not match its content: the signed part '#list-signed-properties' was changed after signing"),
        ]
        for (old, new, reason) in cases {
            try write(replacingFirst(old, with: new, in: bytes), to: folder + "/EE_T.xml")
            XCTAssertThrowsError(try TrustStore.load(TrustSettings(tsl: folder + "/EE_T.xml", tslCerts: [s.tlSigner],
                                                                   cacheDir: folder, now: s.times.now))) { error in
                XCTAssertEqual("\(error)", "trusted list \(folder)/EE_T.xml is refused: \(reason)")
            }
        }
    }

    func testTamperedNationalListBehindTheListOfListsIsSkippedWithAWarning() throws {
        let s = try Scenario.shared()
        let folder = try temporaryFolder(self)
        try write(s.listOfListsBytes(), to: folder + "/TSL.xml")
        try write(tamperedNationalList(s), to: folder + "/EE_T.xml")
        let store = try TrustStore.load(TrustSettings(tsl: folder + "/TSL.xml", tslCerts: [s.lotlSigner],
                                                      cacheDir: folder + "/cache", now: s.times.now))
        XCTAssertEqual(store.lists.map(\.territory), ["EE"])
        XCTAssertEqual(store.warnings, ["trusted list \(folder)/EE_T.xml is refused: its signature does not match its content: "
                                        + "the list was changed after signing; its services are not trusted"])
        XCTAssertThrowsError(try store.signerIssuer(of: s.signer, at: s.signerNotBefore)) { error in
            XCTAssertEqual((error as? TrustFailure)?.reason, .unknown)
        }
    }

    func testTamperedListOfListsIsRefused() throws {
        let s = try Scenario.shared()
        let folder = try temporaryFolder(self)
        try write(replacingFirst("asicfs test scheme operator", with: "asicfs test scheme operatoR", in: s.listOfListsBytes()),
                  to: folder + "/TSL.xml")
        try write(s.bytes(.base), to: folder + "/EE_T.xml")
        XCTAssertThrowsError(try TrustStore.load(TrustSettings(tsl: folder + "/TSL.xml", tslCerts: [s.lotlSigner],
                                                               cacheDir: folder, now: s.times.now))) { error in
            XCTAssertEqual("\(error)", "trusted list \(folder)/TSL.xml is refused: its signature does not match its content: "
                           + "the list was changed after signing")
        }
    }

    func testListSignedBySomeoneElseIsRefused() throws {
        let s = try Scenario.shared()
        let path = try s.listOfListsPath()
        XCTAssertThrowsError(try TrustStore.load(TrustSettings(tsl: path, tslCerts: [s.root],
                                                               cacheDir: try temporaryFolder(self), now: s.times.now))) { error in
            XCTAssertEqual("\(error)", "trusted list \(path) is refused: it is signed by TEST of asicfs lotl-signer, "
                           + "which is not an allowed signer (allowed: TEST of asicfs Root CA 2025)")
        }
    }

    func testListWithoutTslCertIsRefused() throws {
        let s = try Scenario.shared()
        XCTAssertThrowsError(try TrustStore.load(TrustSettings(tsl: s.path(.base), tslCerts: [],
                                                               cacheDir: try temporaryFolder(self)))) { error in
            XCTAssertTrue("\(error)".contains("no tsl-cert is configured"), "\(error)")
        }
    }

    func testExpiredListIsUsedWithAWarning() throws {
        let s = try Scenario.shared()
        let nextUpdate = s.times.now + 365 * TrustScenarioTimes.day
        let store = try TrustStore.load(TrustSettings(tsl: s.path(.base), tslCerts: [s.tlSigner],
                                                      cacheDir: try temporaryFolder(self), now: nextUpdate + 1))
        XCTAssertEqual(store.lists.count, 1)
        XCTAssertEqual(store.warnings, ["trusted list EE_T (sequence \(TrustScenarioLists.sequence)) from \(try s.path(.base)) "
                                        + "expired on \(TestTime.string(nextUpdate)) (its NextUpdate); it is still used"])
        XCTAssertNoThrow(try store.signerIssuer(of: s.signer, at: s.signerNotBefore))
        // Until NextUpdate it is not.
        XCTAssertEqual(try TrustStore.load(TrustSettings(tsl: s.path(.base), tslCerts: [s.tlSigner],
                                                         cacheDir: try temporaryFolder(self), now: nextUpdate)).warnings, [])
    }

    func testPointedListIsLookedForInTheCacheFolder() throws {
        let s = try Scenario.shared()
        let folder = try temporaryFolder(self)
        try FileManager.default.createDirectory(atPath: folder + "/lotl", withIntermediateDirectories: true)
        try write(s.listOfListsBytes(), to: folder + "/lotl/TSL.xml")
        let settings = TrustSettings(tsl: folder + "/lotl/TSL.xml", tslCerts: [s.lotlSigner], cacheDir: folder + "/cache", now: s.times.now)
        // Neither beside the list of lists nor in the cache, and no downloading: a warning, not a failure.
        let without = try TrustStore.load(settings)
        XCTAssertEqual(without.lists.count, 1)
        XCTAssertEqual(without.warnings, ["trusted list \(url) is not available: it is not in "
                                          + "\(folder)/lotl/EE_T.xml or \(folder)/cache/EE_T.xml and downloading is not configured;"
                                          + " its services are not trusted"])
        try FileManager.default.createDirectory(atPath: folder + "/cache", withIntermediateDirectories: true)
        try write(s.bytes(.base), to: folder + "/cache/EE_T.xml")
        let with = try TrustStore.load(settings)
        XCTAssertEqual(with.lists.map(\.territory), ["EE", "EE_T"])
        XCTAssertEqual(with.warnings, [])
    }

    func testListsByURLAreDownloadedOnceAndThenReadFromTheCache() throws {
        let s = try Scenario.shared()
        let cache = try temporaryFolder(self) + "/cache"
        let served = ["tl-mp-test-EE.xml": try s.listOfListsBytes(), "EE_T.xml": try s.bytes(.base)]
        let requests = RequestLog()
        var settings = TrustSettings(tsl: lotlURL, tslCerts: [s.lotlSigner], cacheDir: cache, now: s.times.now)
        settings.download = { url in
            requests.append(url)
            guard let bytes = served[String(url.split(separator: "/").last ?? "")] else { throw TrustedListError("404") }
            return bytes
        }
        let first = try TrustStore.load(settings)
        XCTAssertEqual(first.lists.map(\.territory), ["EE", "EE_T"])
        XCTAssertEqual(requests.urls, [lotlURL, url])
        XCTAssertEqual(FileManager.default.contents(atPath: cache + "/EE_T.xml").map(Array.init), served["EE_T.xml"])

        let second = try TrustStore.load(settings)
        XCTAssertEqual(second.lists.map(\.territory), ["EE", "EE_T"])
        XCTAssertEqual(requests.urls.count, 2, "fresh cached copies are not downloaded again")

        // Past NextUpdate the lists are fetched again; when that fails the stale copy is used, with a warning.
        settings.now = s.times.now + 400 * TrustScenarioTimes.day
        settings.download = { _ in throw TrustedListError("could not connect to asicfs.invalid") }
        let offline = try TrustStore.load(settings)
        XCTAssertEqual(offline.lists.map(\.territory), ["EE", "EE_T"])
        XCTAssertTrue(offline.warnings.contains("could not connect to asicfs.invalid; the cached copy \(cache)/EE_T.xml is used instead"),
                      "\(offline.warnings)")
        XCTAssertEqual(offline.warnings.filter { $0.contains("expired on") }.count, 2)
    }

    /// Offline: the failed download is remembered in the cache folder for five minutes, so the
    /// next loads fail at once with the same reason (each `verify` waited the full timeout
    /// again); then it is tried again, and a success forgets the failure. The message says the
    /// list could not be downloaded, not that no trust is configured.
    func testAFailedDownloadIsRememberedForAFewMinutes() throws {
        let s = try Scenario.shared()
        let cache = try temporaryFolder(self) + "/cache"
        let requests = RequestLog()
        let online = Switch()
        let served = ["tl-mp-test-EE.xml": try s.listOfListsBytes(), "EE_T.xml": try s.bytes(.base)]
        var settings = TrustSettings(tsl: lotlURL, tslCerts: [s.lotlSigner], cacheDir: cache, now: s.times.now)
        settings.download = { url in
            requests.append(url)
            guard online.isOn else { throw CryptoError("could not connect to asicfs.invalid") }
            return served[String(url.split(separator: "/").last ?? "")] ?? []
        }
        let expected = "the trusted list could not be downloaded (offline?): trusted list \(lotlURL) cannot be downloaded: "
            + "could not connect to asicfs.invalid"
        XCTAssertThrowsError(try TrustStore.load(settings)) { XCTAssertEqual("\($0)", expected) }
        XCTAssertEqual(requests.urls.count, 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: cache + "/tl-mp-test-EE.xml.unreachable"))

        settings.now = s.times.now + 299
        XCTAssertThrowsError(try TrustStore.load(settings)) { error in
            XCTAssertTrue("\(error)".hasPrefix(expected + " (at "), "\(error)")
            XCTAssertTrue("\(error)".hasSuffix("; not tried again for 5 minutes: remove \(cache)/tl-mp-test-EE.xml.unreachable to try now)"),
                          "\(error)")
        }
        XCTAssertEqual(requests.urls.count, 1, "not downloaded again within five minutes")

        settings.now = s.times.now + 301
        online.isOn = true
        XCTAssertEqual(try TrustStore.load(settings).lists.map(\.territory), ["EE", "EE_T"])
        XCTAssertEqual(requests.urls.count, 3)
        XCTAssertFalse(FileManager.default.fileExists(atPath: cache + "/tl-mp-test-EE.xml.unreachable"))
    }

    func testDownloadedListWithABadSignatureIsNotCached() throws {
        let s = try Scenario.shared()
        let cache = try temporaryFolder(self) + "/cache"
        let tampered = try tamperedNationalList(s)
        var settings = TrustSettings(tsl: "https://example.test/EE_T.xml", tslCerts: [s.tlSigner], cacheDir: cache, now: s.times.now)
        settings.download = { _ in tampered }
        XCTAssertThrowsError(try TrustStore.load(settings)) { error in
            XCTAssertTrue("\(error)".contains("was changed after signing"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: cache + "/EE_T.xml"))
    }

    func testWithoutAListOnlyTrustAnchorsCount() throws {
        let s = try Scenario.shared()
        let store = try TrustStore.load(TrustSettings(tsl: nil, tslCerts: [], trustAnchors: [], cacheDir: try temporaryFolder(self)))
        XCTAssertTrue(store.lists.isEmpty)
        XCTAssertThrowsError(try store.signerIssuer(of: s.signer, at: s.signerNotBefore)) { error in
            XCTAssertEqual("\(error)", "issuer TEST of ESTEID-LIKE 2025 is unknown: no trusted list lists it and it is no trust anchor")
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

/// Whether the test's network is up, flipped by the test while downloads read it.
final class Switch: @unchecked Sendable {
    private let lock = NSLock()
    private var on = false
    var isOn: Bool {
        get { lock.withLock { on } }
        set { lock.withLock { on = newValue } }
    }
}

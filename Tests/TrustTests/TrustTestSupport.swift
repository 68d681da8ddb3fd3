import Crypto
import Foundation
import TestTools
import Trust
import XCTest

/// A dated test PKI and the trust-list scenarios written for it (TestTools/TrustListScenarios.swift),
/// made once per test process: the shape of libdigidocpp's tsl.asice and its EE_T-*.xml lists.
/// The signer certificate was issued at `times.signerNotBefore` (T0); these tests take the
/// time-stamp and the OCSP response to be made at `times.timeStamp` (T1, "now").
final class Scenario: @unchecked Sendable {
    let folder: String
    let pki: TestPKI
    let times: TrustScenarioTimes
    let lists: TrustScenarioLists
    let signer: Certificate
    let issuingCA: Certificate
    let root: Certificate
    let ocspResponder: Certificate
    let timeStampAuthority: Certificate
    let tlSigner: Certificate
    let lotlSigner: Certificate
    private let lock = NSLock()
    private var written: [TrustListScenario: String] = [:]

    private static let lock = NSLock()
    nonisolated(unsafe) private static var made: Scenario?

    /// The process's scenario set, made on first use (about two seconds).
    static func shared() throws -> Scenario {
        try lock.withLock {
            if let made { return made }
            let scenario = try Scenario()
            made = scenario
            scenarioFolder = scenario.folder
            atexit { if let folder = scenarioFolder { try? FileManager.default.removeItem(atPath: folder) } }
            return scenario
        }
    }

    private init() throws {
        folder = NSTemporaryDirectory() + "asicfs-trust-scenarios-\(getpid())"
        times = TrustScenarioTimes()
        pki = try TestPKI.makeDated(in: folder + "/pki", caNotBefore: times.caNotBefore, signerNotBefore: times.signerNotBefore)
        lists = TrustScenarioLists(pki: pki, times: times)
        func load(_ path: String) throws -> Certificate { try TrustAnchorFiles.certificates(inFile: path)[0] }
        signer = try load(pki.signer)
        issuingCA = try load(pki.issuing)
        root = try load(pki.root)
        ocspResponder = try load(pki.ocsp)
        timeStampAuthority = try load(pki.tsa)
        tlSigner = try load(pki.tlSigner)
        lotlSigner = try load(pki.lotlSigner)
    }

    /// The path of `scenario`'s list, written on first use.
    func path(_ scenario: TrustListScenario) throws -> String {
        try lock.withLock {
            if let path = written[scenario] { return path }
            let path = try lists.write(scenario, in: folder)
            written[scenario] = path
            return path
        }
    }

    func bytes(_ scenario: TrustListScenario) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path(scenario)))) }

    /// One national list loaded alone, checked against tl-signer: the set-up of libdigidocpp's TSL tests.
    func store(_ scenario: TrustListScenario, cacheDir: String = NSTemporaryDirectory()) throws -> TrustStore {
        try TrustStore.load(TrustSettings(tsl: path(scenario), tslCerts: [tlSigner], cacheDir: cacheDir, now: times.now))
    }

    /// Where the list of lists says the national list is (its last part names the file looked
    /// for beside the list of lists and in the cache).
    static let nationalListURL = "https://asicfs.invalid/test-TL/EE_T.xml"
    private var listOfLists: String?

    /// The list of lists (territory EE, signed by lotl-signer) pointing to the base list, written
    /// as TSL.xml beside it, so that loading it finds the base list there.
    func listOfListsPath() throws -> String {
        _ = try path(.base)
        return try lock.withLock {
            if let listOfLists { return listOfLists }
            let path = folder + "/TSL.xml"
            try lists.listOfLists(pointingTo: Self.nationalListURL).write(to: path)
            listOfLists = path
            return path
        }
    }

    func listOfListsBytes() throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: listOfListsPath()))) }

    var signerNotBefore: Date { times.signerNotBefore }
    var timeStampTime: Date { times.timeStamp }
    var ocspProducedAt: Date { times.timeStamp }
}

nonisolated(unsafe) private var scenarioFolder: String?

/// A UTC time written as the lists write it.
func utc(_ text: String) -> Date { TestTime.date(text)! }

/// A fresh temporary folder, removed when the test ends.
func temporaryFolder(_ test: XCTestCase) throws -> String {
    let path = NSTemporaryDirectory() + "asicfs-trust-\(getpid())-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
    return path
}

func write(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// `bytes` with the first `old` replaced by `new` (same length, so only content changes).
func replacingFirst(_ old: String, with new: String, in bytes: [UInt8]) throws -> [UInt8] {
    let needle = Array(old.utf8), replacement = Array(new.utf8)
    precondition(needle.count == replacement.count)
    guard let start = (0...(bytes.count - needle.count)).first(where: { bytes[$0..<$0 + needle.count].elementsEqual(needle) }) else {
        throw TrustedListError("'\(old)' is not in the file")
    }
    var copy = bytes
    copy.replaceSubrange(start..<start + needle.count, with: replacement)
    return copy
}

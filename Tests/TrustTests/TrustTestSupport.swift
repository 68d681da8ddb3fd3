import Crypto
import Foundation
import Trust
import XCTest

/// The libdigidocpp corpus (Tests/Fixtures/libdigidocpp) and the times of tsl.asice.
enum Corpus {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/libdigidocpp").path

    static func path(_ name: String) -> String { folder + "/" + name }

    static func bytes(_ name: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path(name)) else {
            throw TrustedListError("fixture \(name) is missing")
        }
        return Array(data)
    }

    /// Test TSL (C=EE), the certificate that signs TSL.xml, EE_T.xml and every EE_T-*.xml.
    static func tslCertificate() throws -> Certificate { try TrustAnchorFiles.certificates(inFile: path("TSL.crt"))[0] }

    /// The times EXPECTED.tsv names for tsl.asice.
    static let signerNotBefore = date("2013-04-23T11:49:30Z")
    static let timeStampTime = date("2016-11-28T13:46:43Z")
    static let ocspProducedAt = date("2016-11-28T13:46:43Z")
    /// "Now" for loading: before the test lists' NextUpdate (2027-08-20), so no expiry warning.
    static let now = date("2026-06-01T00:00:00Z")

    static func date(_ text: String) -> Date {
        let parts = text.split { "-T:Z".contains($0) }.map { Int($0)! }
        var components = DateComponents()
        components.timeZone = TimeZone(identifier: "UTC")
        (components.year, components.month, components.day) = (parts[0], parts[1], parts[2])
        (components.hour, components.minute, components.second) = (parts[3], parts[4], parts[5])
        return Calendar(identifier: .gregorian).date(from: components)!
    }

    /// One trusted list loaded alone, verified with TSL.crt: the set-up of libdigidocpp's TSL tests.
    static func store(withList name: String, cacheDir: String = NSTemporaryDirectory()) throws -> TrustStore {
        try TrustStore.load(TrustSettings(tsl: path(name), tslCerts: [tslCertificate()], cacheDir: cacheDir, now: now))
    }
}

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

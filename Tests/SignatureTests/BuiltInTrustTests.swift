import Configuration
import Crypto
import Foundation
@testable import Signing
import Trust
import XCTest

/// Trust out of the box: the EU LOTL (the default) and the Estonian test LOTL (`tsl = test`)
/// are checked against built-in signers, so validation needs no `tsl-cert`.
final class BuiltInTrustTests: XCTestCase {
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    func environment(_ settings: [String]) throws -> SignatureEnvironment {
        try SignatureEnvironment(configuration: try Configuration.load(explicitPath: "/dev/null", overrides: settings),
                                 environment: ["HOME": NSTemporaryDirectory()])
    }

    func sha256(_ certificate: Certificate) -> String { Digest.hash(certificate.der, .sha256).hexString.uppercased() }

    /// The certificates in the binary are the files of contrib/trust (scripts/embed-trust.sh).
    func testTheEmbeddedSignersAreTheFilesInContribTrust() throws {
        let folder = Self.root + "/contrib/trust/"
        let eu = try (1...6).map { try String(contentsOfFile: folder + "eu-lotl-signers/tl-mp\($0).pem", encoding: .utf8) }
        let test = try String(contentsOfFile: folder + "test-tl/trusted-test-tsl.pem", encoding: .utf8)
        let trim = { (text: String) in text.trimmingCharacters(in: .whitespacesAndNewlines) }
        XCTAssertEqual(BuiltInTrust.euListOfTrustedListsSigners.map(trim), eu.map(trim), "run scripts/embed-trust.sh")
        XCTAssertEqual(BuiltInTrust.testListOfTrustedListsSigners.map(trim), [trim(test)], "run scripts/embed-trust.sh")
        let tls = try ["DigiCert_Global_G2_TLS_RSA_SHA256_2020_CA1", "DigiCert_Global_Root_G2"].map {
            try String(contentsOfFile: folder + "sk-tls/\($0).pem", encoding: .utf8)
        }
        XCTAssertEqual(BuiltInTrust.skServiceTLSAnchors.map(trim), tls.map(trim), "run scripts/embed-trust.sh")
    }

    func testTheDefaultIsTheEULOTLWithItsSixSigners() throws {
        let settings = try environment([]).trustSettings
        XCTAssertEqual(settings.tsl, "https://ec.europa.eu/tools/lotl/eu-lotl.xml")
        XCTAssertEqual(settings.tslCerts.map(sha256).map { String($0.prefix(8)) },
                       ["D2064FDD", "E0A620FB", "C0641C4F", "DF7E2936", "B63D4167", "236103F0"])
    }

    func testTslTestIsTheEstonianTestLOTLWithItsSigner() throws {
        let settings = try environment(["tsl=test"]).trustSettings
        XCTAssertEqual(settings.tsl, "https://open-eid.github.io/test-TL/tl-mp-test-EE.xml")
        XCTAssertEqual(settings.tslCerts.map(sha256),
                       ["9E4E83973EAB8EC3A9F5368D5C983444D8FF9B9DE80BB446CDD0C7719EE3ADFA"])
        // tsl-cert replaces the built-in signer; tsl = none has none.
        let own = try environment(["tsl=test", "tsl-cert=\(Self.root)/Tests/Fixtures/libdigidocpp/ca.crt"]).trustSettings
        XCTAssertEqual(own.tslCerts.count, 1)
        XCTAssertNotEqual(own.tslCerts.map(sha256), settings.tslCerts.map(sha256))
        XCTAssertNil(try environment(["tsl=none"]).trustSettings.tsl)
    }

    /// With the published test lists in the cache (copies from open-eid/test-TL, valid to
    /// 2027-08), `tsl = test` loads them, offline, checked by the built-in signer: SK's test CAs
    /// are then trusted.
    func testTheTestListsLoadFromTheCacheWithTheBuiltInSigner() throws {
        let cache = NSTemporaryDirectory() + "asicfs-test-tl-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: cache) }
        for name in ["tl-mp-test-EE.xml", "EE_T.xml"] {
            try FileManager.default.copyItem(atPath: Self.root + "/Tests/Fixtures/test-tl/" + name, toPath: cache + "/" + name)
        }
        let environment = try environment(["tsl=test", "cache-dir=\(cache)"])
        let store = try environment.trust().get()
        let names = Set(store.knownCertificates.compactMap(\.commonName))
        XCTAssertTrue(names.contains("TEST of ESTEID2018"), "\(names.sorted())")
        XCTAssertTrue(names.contains("TEST of SK ID Solutions EID-Q 2024E"), "\(names.sorted())")
    }
}

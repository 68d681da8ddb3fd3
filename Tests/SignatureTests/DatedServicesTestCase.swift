import ASiC
import Configuration
import Foundation
import Signing
import TestTools
import XCTest

/// A test class with a dated test PKI (`TestPKI.makeDated`: its signer issued long before now,
/// at `times.signerNotBefore`) and the loopback TSA and OCSP services serving it, shared by the
/// class's tests: the shape of a signature whose certificate is older than its time-stamp, as
/// the trust-list scenarios need. Signing settings trust only the PKI's root.
class DatedServicesTestCase: XCTestCase {
    final class Shared: @unchecked Sendable {
        let folder: String
        let times: TrustScenarioTimes
        let pki: TestPKI
        let services: TestServices

        init(label: String) throws {
            folder = NSTemporaryDirectory() + "asicfs-\(label)-\(getpid())"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            times = TrustScenarioTimes()
            pki = try TestPKI.makeDated(in: folder + "/pki", caNotBefore: times.caNotBefore, signerNotBefore: times.signerNotBefore)
            services = try TestServices.start(pki: pki)
        }

        func stop() {
            services.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    nonisolated(unsafe) static var shared: Shared?
    nonisolated(unsafe) static var failure: String?
    /// The name of the class's private folder.
    class var label: String { "dated" }

    override class func setUp() {
        do { shared = try Shared(label: label) } catch { failure = "\(error)" }
    }

    override class func tearDown() {
        shared?.stop()
        shared = nil
    }

    var dated: Shared {
        get throws { try XCTUnwrap(Self.shared, "the dated test PKI and its loopback services: \(Self.failure ?? "")") }
    }

    /// TSA of the loopback services, no trusted lists, the dated PKI's root as the trust anchor.
    func environment() throws -> SignatureEnvironment {
        let dated = try dated
        return try SignatureEnvironment(configuration: try Configuration.load(explicitPath: "/dev/null", overrides: [
            "tsa-url=\(dated.services.tsaURL)", "tsl=none", "trust-anchors=\(dated.pki.root)", "cache-dir=\(dated.folder)/cache",
        ]))
    }

    /// Signs with the dated signer; the OCSP request goes to the loopback responder (the
    /// signer's AIA names no running one).
    func sign(_ container: Container, _ shaping: SignatureForge.Shaping = SignatureForge.Shaping()) throws -> Container {
        let dated = try dated
        var shaping = shaping
        shaping.ocspURL = shaping.ocspURL ?? dated.services.ocspURL
        return try SignatureForge(environment: try environment(), tsaURL: dated.services.tsaURL, p12: dated.pki.signerP12)
            .sign(container, shaping)
    }

    func newContainer(_ files: [(String, [UInt8])]) throws -> Container {
        let path = try dated.folder + "/c-\(UUID().uuidString.prefix(8)).asice"
        return try Container.create(at: path, files: files.map { NewDataFile(bytes: $0.1, name: $0.0) })
    }
}

import Configuration
import Foundation
import Signing
import TestTools
import XCTest

/// A test class with a fresh test PKI and its loopback TSA and OCSP services, shared by the
/// class's tests (made in `setUp()` of the class, stopped in `tearDown()`), and signing settings
/// that trust only that PKI's root.
class LoopbackServicesTestCase: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    /// The name of the class's private folder.
    class var label: String { "services" }
    static var folder: String { shared.folder }

    override class func setUp() { shared = SharedTestServices(label: label) }
    override class func tearDown() { shared.stop() }

    var services: TestServices {
        get throws { try XCTUnwrap(Self.shared.services, "the loopback TSA/OCSP services and the test PKI: \(Self.shared.failure ?? "")") }
    }

    /// TSA of the loopback services, no trusted lists, the test PKI's root as the trust anchor.
    func environment(_ extra: [String] = []) throws -> SignatureEnvironment {
        let services = try services
        return try SignatureEnvironment(configuration: try Configuration.load(explicitPath: "/dev/null", overrides: [
            "tsa-url=\(services.tsaURL)", "tsl=none", "trust-anchors=\(services.pki.root)", "cache-dir=\(Self.folder)/cache",
        ] + extra))
    }
}

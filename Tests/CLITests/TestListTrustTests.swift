import Foundation
import TestTools
import XCTest

/// Trust from a trusted list, not trust anchors: a list of lists and the trusted list it points
/// to, made for the test PKI and signed by its test list signers (contrib/testpki/mklists.py).
final class TestListTrustTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "cli-test-lists") }
    override class func tearDown() { shared.stop() }

    var services: TestServices {
        get throws { try XCTUnwrap(Self.shared.services, "the loopback TSA/OCSP services: \(Self.shared.failure ?? "")") }
    }

    func signedByAsicfs() throws -> String {
        try SignedTestContainers.make(path("doc.asice"), files: [("contract.txt", Data("the contract\n".utf8))],
                                      binary: Self.binary, services: try services)
        return path("doc.asice")
    }

    func testAsicfsReportsTheSignersTrustThroughTheTestLists() throws {
        let lists = try TestTrustLists.make(for: try services.pki, in: root.path + "/lists")
        let container = try signedByAsicfs()
        let verify = try asicfs(["verify", container] + lists.settings(cache: root.path + "/cache"))
        assertSuccess(verify)
        XCTAssertTrue(verify.stdout.contains("qualification    QES"), verify.stdout)
        XCTAssertTrue(verify.stdout.hasSuffix("Result: VALID\n"), verify.stdout)
        // Without the lists (and no anchors) the same signature has no trust.
        let untrusted = try asicfs(["verify", container, "-o", "tsl=none"])
        XCTAssertEqual(untrusted.status, 1)
        XCTAssertTrue(untrusted.stdout.contains("INDETERMINATE"), untrusted.stdout)
    }

    /// The lists served over HTTP from loopback: asicfs downloads the LOTL and the TL it points
    /// to (real libcurl), checks both, keeps them in cache-dir, and the signer is trusted.
    func testTheListsAreDownloadedCheckedAndCachedOverHTTP() throws {
        let served = root.path + "/served"
        try FileManager.default.createDirectory(atPath: served, withIntermediateDirectories: true)
        let server = try LoopbackProcess.start("/usr/bin/python3", ["-c", """
            import functools, http.server, sys
            handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
            handler.log_message = lambda *args: None
            server = http.server.HTTPServer(('127.0.0.1', 0), handler)
            print('PORT', server.server_address[1], flush=True)
            server.serve_forever()
            """, served])
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let lists = try TestTrustLists.make(for: try services.pki, in: served, tlURL: base + "/EE_T.xml")
        let container = try signedByAsicfs()
        let cache = root.path + "/http-cache"
        let settings = ["-o", "tsl=\(base)/tl-mp-test-EE.xml", "-o", "tsl-cert=\(lists.lotlSigner)", "-o", "cache-dir=\(cache)"]
        let verify = try asicfs(["verify", container] + settings)
        assertSuccess(verify)
        XCTAssertTrue(verify.stdout.hasSuffix("Result: VALID\n"), verify.stdout)
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: cache)), ["tl-mp-test-EE.xml", "EE_T.xml"])
        // With the server gone, the cached copies serve (they are within their NextUpdate).
        server.stop()
        assertSuccess(try asicfs(["verify", container] + settings))
    }
}

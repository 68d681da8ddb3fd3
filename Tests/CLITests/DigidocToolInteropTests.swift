import Foundation
import TestTools
import XCTest

/// asicfs and the reference implementation (libdigidocpp's digidoc-tool, contrib/tools) agree,
/// with trust from a trusted list, not trust anchors: the test PKI's CA, TSA and OCSP responder
/// are put into copies of the Estonian test lists signed by test keys
/// (contrib/testpki/mktl.py), which both tools read from files, offline.
/// - an LT signature by asicfs, and the same extended by `asicfs extend` (LTA), are `OK` in
///   digidoc-tool;
/// - an LTA signature by digidoc-tool (`--profile=time-stamp-archive`) is VALID in asicfs;
/// - asicfs reports the trust of the signer through the lists.
final class DigidocToolInteropTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    nonisolated(unsafe) static var lists = ""
    static let lotlURL = "https://asicfs.invalid/test-TL/tl-mp-test-EE.xml"
    static let tool = "/opt/libdigidocpp/bin/digidoc-tool"

    override class func setUp() {
        shared = SharedTestServices(label: "digidoc-tool")
        lists = shared.folder + "/lists"
        try? FileManager.default.createDirectory(atPath: lists, withIntermediateDirectories: true)
    }
    override class func tearDown() { shared.stop() }

    static var root: String { packageRoot.path }
    static var venvPython: String {
        let environment = ProcessInfo.processInfo.environment
        return (environment["ASICFS_PYASICE_VENV"]
            ?? ((environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")) + "/asicfs/pyasice-venv")) + "/bin/python"
    }

    var services: TestServices {
        get throws { try XCTUnwrap(Self.shared.services, "the loopback TSA/OCSP services and the test PKI") }
    }

    /// The test lists for this PKI, made once.
    func makeLists() throws {
        if FileManager.default.fileExists(atPath: Self.lists + "/EE_T.xml") { return }
        let made = try Shell.run(Self.venvPython, [Self.root + "/contrib/testpki/mktl.py", try services.pki.folder,
                                                   Self.root + "/Tests/Fixtures/test-tl/tl-mp-test-EE.xml",
                                                   Self.root + "/Tests/Fixtures/test-tl/EE_T.xml", Self.lists])
        XCTAssertEqual(made.status, 0, "mktl.py (lxml from scripts/setup-pyasice.sh, xmlsec1): \(made.stderr)")
    }

    /// asicfs settings: trust only from the generated lists (no trust anchors).
    func listSettings() throws -> [String] {
        ["-o", "tsl=\(Self.lists)/tl-mp-test-EE.xml", "-o", "tsl-cert=\(try services.pki.path("lotl-signer.pem"))",
         "-o", "cache-dir=\(Self.shared.folder)/cache-\(UUID().uuidString.prefix(6))", "-o", "tsa-url=\(try services.tsaURL)"]
    }

    /// Runs digidoc-tool with its offline configuration and the lists in ~/.digidocpp, putting
    /// back whatever was there before.
    func digidocTool(_ arguments: [String]) throws -> Shell.Output {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: Self.tool), "run scripts/setup-digidoc-tool.sh (make test does)")
        let home = String(cString: getpwuid(getuid())!.pointee.pw_dir) + "/.digidocpp"
        let backup = home + ".asicfs-backup-\(getpid())"
        let existed = FileManager.default.fileExists(atPath: home)
        if existed { try FileManager.default.moveItem(atPath: home, toPath: backup) }
        defer {
            try? FileManager.default.removeItem(atPath: home)
            if existed { try? FileManager.default.moveItem(atPath: backup, toPath: home) }
        }
        try FileManager.default.createDirectory(atPath: home + "/tsl", withIntermediateDirectories: true)
        try Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <configuration><param name="tsl.autoupdate" lock="false">false</param></configuration>
            """.utf8).write(to: URL(fileURLWithPath: home + "/digidocpp.conf"))
        for name in ["tl-mp-test-EE.xml", "EE_T.xml"] {
            try FileManager.default.copyItem(atPath: Self.lists + "/" + name, toPath: home + "/tsl/" + name)
        }
        // The command first, then options, then the file (digidoc-tool reads them in that order).
        let trust = ["--tslurl=\(Self.lotlURL)", "--tslcert=\(try services.pki.path("lotl-signer.pem"))"]
        return try Shell.run(Self.tool, [arguments[0]] + trust + arguments.dropFirst())
    }

    func signedByAsicfs() throws -> String {
        try write("contract.txt", "the contract\n")
        assertSuccess(try asicfs(["create", "doc.asice", path("contract.txt")]))
        let pass = try write("pass", TestPKI.passphrase + "\n")
        assertSuccess(try asicfs(["sign", path("doc.asice"), "--method", "pkcs12", "file=\(try services.pki.signerP12)",
                                  "passphrase-file=\(pass)"] + (try listSettings())))
        return path("doc.asice")
    }

    func testAsicfsReportsTheSignersTrustThroughTheTestLists() throws {
        try makeLists()
        let container = try signedByAsicfs()
        let verify = try asicfs(["verify", container] + (try listSettings()))
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
        let served = Self.shared.folder + "/served-\(UUID().uuidString.prefix(6))"
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
        let made = try Shell.run(Self.venvPython, [Self.root + "/contrib/testpki/mktl.py", try services.pki.folder,
                                                   Self.root + "/Tests/Fixtures/test-tl/tl-mp-test-EE.xml",
                                                   Self.root + "/Tests/Fixtures/test-tl/EE_T.xml", served, base + "/EE_T.xml"])
        XCTAssertEqual(made.status, 0, made.stderr)
        try makeLists()
        let container = try signedByAsicfs()
        let cache = Self.shared.folder + "/http-cache-\(UUID().uuidString.prefix(6))"
        let settings = ["-o", "tsl=\(base)/tl-mp-test-EE.xml", "-o", "tsl-cert=\(try services.pki.path("lotl-signer.pem"))",
                        "-o", "cache-dir=\(cache)"]
        let verify = try asicfs(["verify", container] + settings)
        assertSuccess(verify)
        XCTAssertTrue(verify.stdout.hasSuffix("Result: VALID\n"), verify.stdout)
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: cache)), ["tl-mp-test-EE.xml", "EE_T.xml"])
        // With the server gone, the cached copies serve (they are within their NextUpdate).
        server.stop()
        assertSuccess(try asicfs(["verify", container] + settings))
    }

    func testDigidocToolAcceptsAsicfsLTAndExtendedLTASignatures() throws {
        try makeLists()
        let container = try signedByAsicfs()
        var result = try digidocTool(["open", "--offline", container])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("Validation: \u{1B}[32mOK") || result.stdout.contains("Validation: OK"), result.stdout)

        assertSuccess(try asicfs(["extend", container] + (try listSettings())))
        result = try digidocTool(["open", "--offline", container])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("OK"), result.stdout)
        XCTAssertFalse(result.stdout.contains("FAILED"), result.stdout)
    }

    func testAnLTASignatureByDigidocToolIsValidInAsicfs() throws {
        try makeLists()
        let data = try write("report.txt", "made by digidoc-tool\n")
        let out = path("by-digidoc-tool.asice")
        let made = try digidocTool(["create", "--file=\(data)", "--mime=text/plain", "--pkcs12=\(try services.pki.signerP12)",
                                    "--pin=\(TestPKI.passphrase)", "--profile=time-stamp-archive", "--tsurl=\(try services.tsaURL)", out])
        XCTAssertEqual(made.status, 0, made.stdout + made.stderr)
        let verify = try asicfs(["verify", out] + (try listSettings()))
        assertSuccess(verify)
        XCTAssertTrue(verify.stdout.contains("profile          BES/time-stamp-archive"), verify.stdout)
        XCTAssertTrue(verify.stdout.hasSuffix("Result: VALID\n"), verify.stdout)
    }
}

import Foundation
import TestTools
import XCTest

/// Signatures made by asicfs, checked by validators that share no code with it, from Debian and
/// PyPI only:
/// - `xmlsec1 --verify` (Debian xmlsec1) checks the XML-DSig layer: every reference (the data
///   files by their percent-encoded names, SignedProperties by Id), the signature value, and the
///   signer's certificate chain up to the test root;
/// - pyasice (PyPI, scripts/setup-pyasice.sh) checks the signature value, the time-stamp and the
///   OCSP response, and Tests/SignatureTests/Interop/pyasice_check.py every digest besides.
/// Both accept an LT signature and the same signature after `asicfs extend` (LTA), and both
/// refuse it once a signed byte changed. The other way round, an LT signature made by pyasice
/// is VALID in asicfs, and stays VALID (and accepted by pyasice) once asicfs extended it to LTA.
/// (Debian's libdigidoc-tools, cdigidoc, reads only DDOC: it does not apply to ASiC-E.)
final class IndependentValidatorTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "cli-validators") }
    override class func tearDown() { shared.stop() }

    var services: TestServices {
        get throws { try XCTUnwrap(Self.shared.services, "the loopback TSA/OCSP services: \(Self.shared.failure ?? "")") }
    }
    static var venvPython: String {
        let environment = ProcessInfo.processInfo.environment
        return (environment["ASICFS_PYASICE_VENV"]
            ?? ((environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")) + "/asicfs/pyasice-venv")) + "/bin/python"
    }

    /// An LT signature over files with plain, URI-special and non-ASCII names. The OCSP answer
    /// is RSA-signed: pyasice checks only those.
    func signedByAsicfs() throws -> String {
        let container = path("doc.asice")
        try SignedTestContainers.make(container, files: [("contract.txt", Data("the contract\n".utf8)),
                                                         (Self.awkwardName, Data("awkward\n".utf8)),
                                                         (Self.umlautName, Data("umlauts\n".utf8))],
                                      binary: Self.binary, services: try services, extra: ["-o", "ocsp-url=\(try services.ocspRSAURL)"])
        return container
    }

    /// xmlsec1 on the signature document, unzipped by unzip, placed beside the data files so that
    /// their references (`URI="contract.txt"`) resolve; SignedProperties is found by its Id.
    func xmlsec1Verify(_ container: String) throws -> RunResult {
        let folder = root.appendingPathComponent("xmlsec1-\(UUID().uuidString.prefix(6))").path
        let unzip = try runTool("/usr/bin/unzip", ["-q", container, "-d", folder])
        XCTAssertEqual(unzip.status, 0, unzip.stderr)
        try FileManager.default.copyItem(atPath: folder + "/META-INF/signatures0.xml", toPath: folder + "/signature.xml")
        let pki = try services.pki
        return try runTool("/usr/bin/xmlsec1", ["--verify", "--id-attr:Id", "SignedProperties", "--trusted-pem", pki.root,
                                                "--untrusted-pem", pki.issuing, folder + "/signature.xml"], in: URL(fileURLWithPath: folder))
    }

    func pyasiceCheck(_ container: String) throws -> RunResult {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: Self.venvPython), "run scripts/setup-pyasice.sh (make test does)")
        return try runTool(Self.venvPython, [Self.packageRoot.path + "/Tests/SignatureTests/Interop/pyasice_check.py", container])
    }

    func assertAccepted(_ container: String, references: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let xmlsec1 = try xmlsec1Verify(container)
        XCTAssertEqual(xmlsec1.status, 0, xmlsec1.stdout + xmlsec1.stderr, file: file, line: line)
        XCTAssertTrue(xmlsec1.stderr.hasPrefix("OK\n"), xmlsec1.stderr, file: file, line: line)
        XCTAssertTrue(xmlsec1.stderr.contains("SignedInfo References (ok/all): \(references)/\(references)"), xmlsec1.stderr, file: file, line: line)
        let pyasice = try pyasiceCheck(container)
        XCTAssertEqual(pyasice.status, 0, pyasice.stdout + pyasice.stderr, file: file, line: line)
        XCTAssertTrue(pyasice.stdout.hasSuffix("ALL OK\n"), pyasice.stdout, file: file, line: line)
    }

    func testAsicfsLTAndExtendedLTASignaturesAreAcceptedByXmlsec1AndPyasice() throws {
        let container = try signedByAsicfs()
        try assertAccepted(container, references: 4)   // three data files and SignedProperties
        let extended = try asicfs(["extend", container] + SignedTestContainers.settings(try services, cache: root.path + "/cache"))
        assertSuccess(extended)
        XCTAssertTrue(extended.stdout.contains("(BES/time-stamp-archive)"), extended.stdout)
        try assertAccepted(container, references: 4)
    }

    /// One changed byte in a data file, or in the signed properties: both validators refuse.
    func testATamperedSignatureIsRefusedByXmlsec1AndPyasice() throws {
        let container = try signedByAsicfs()
        for (entry, old, new) in [("contract.txt", "the contract", "the contrast"),
                                  ("META-INF/signatures0.xml", "SigningTime>20", "SigningTime>19")] {
            let tampered = path("tampered-\(entry.split(separator: "/").last!)")
            let result = try runTool("/usr/bin/env", ["python3", "-c", """
                import sys, zipfile
                source, target, name, old, new = sys.argv[1:6]
                with zipfile.ZipFile(source) as z, zipfile.ZipFile(target, 'w') as out:
                    for info in z.infolist():
                        data = z.read(info)
                        if info.filename == name:
                            assert old.encode() in data, old
                            data = data.replace(old.encode(), new.encode(), 1)
                        out.writestr(info, data)
                """, container, tampered, entry, old, new])
            XCTAssertEqual(result.status, 0, result.stderr)
            let xmlsec1 = try xmlsec1Verify(tampered)
            XCTAssertNotEqual(xmlsec1.status, 0, "\(entry): " + xmlsec1.stderr)
            XCTAssertTrue(xmlsec1.stderr.contains("failed to verify"), "\(entry): " + xmlsec1.stderr)
            let pyasice = try pyasiceCheck(tampered)
            XCTAssertNotEqual(pyasice.status, 0, "\(entry): " + pyasice.stdout)
            XCTAssertFalse(pyasice.stdout.contains("ALL OK"), "\(entry): " + pyasice.stdout)
            // And asicfs agrees.
            let verify = try asicfs(["verify", tampered] + SignedTestContainers.settings(try services, cache: root.path + "/cache"))
            XCTAssertEqual(verify.status, 1, verify.stdout)
            XCTAssertTrue(verify.stdout.hasSuffix("Result: INVALID\n"), verify.stdout)
        }
    }

    /// pyasice builds the signature (RSA test signer, the loopback TSA and RSA OCSP responder);
    /// openssl makes the signature value over the SignedInfo pyasice canonicalized.
    func testAnLTSignatureMadeByPyasiceIsValidInAsicfsAndCanBeExtended() throws {
        let pki = try services.pki
        let container = path("by-pyasice.asice")
        let made = try runTool(Self.venvPython, ["-c", """
            import subprocess, sys
            from pyasice import Container, finalize_signature
            pki, tsa, ocsp, out = sys.argv[1:5]
            def der(pem): return subprocess.run(['openssl', 'x509', '-in', pem, '-outform', 'DER'], check=True, capture_output=True).stdout
            container = Container()
            container.add_file('report.txt', b'made by pyasice\\n', 'text/plain')
            signature = container.prepare_signature(der(pki + '/signer-rsa.pem'))
            value = subprocess.run(['openssl', 'dgst', '-sha256', '-sign', pki + '/signer-rsa.key'], input=signature.signed_data(),
                                   check=True, capture_output=True).stdout
            signature.set_signature_value(value)
            finalize_signature(signature, der(pki + '/issuing.pem'), lt_ts=True, ocsp_url=ocsp, tsa_url=tsa)
            container.add_signature(signature)
            container.save(out)
            """, pki.folder, try services.tsaURL, try services.ocspRSAURL, container])
        XCTAssertEqual(made.status, 0, made.stdout + made.stderr)
        // pyasice names no intermediate CA in the signature: the test lists list the issuing CA.
        let lists = try TestTrustLists.make(for: pki, in: root.path + "/lists")
        let trust = lists.settings(cache: root.path + "/cache-lists")
        let verify = try asicfs(["verify", container] + trust)
        assertSuccess(verify)
        XCTAssertTrue(verify.stdout.contains("signer           RSA-MÄNNIK,MARI,48001010008\n"), verify.stdout)
        XCTAssertTrue(verify.stdout.contains("profile          EPES/time-stamp\n"), verify.stdout)
        XCTAssertTrue(verify.stdout.hasSuffix("Result: VALID\n"), verify.stdout)

        assertSuccess(try asicfs(["extend", container] + trust + ["-o", "tsa-url=\(try services.tsaURL)"]))
        let extended = try asicfs(["verify", container] + trust)
        assertSuccess(extended)
        XCTAssertTrue(extended.stdout.contains("profile          EPES/time-stamp-archive\n"), extended.stdout)
        XCTAssertTrue(extended.stdout.hasSuffix("Result: VALID\n"), extended.stdout)
        // pyasice still verifies its signature value, time-stamp and OCSP response. (The
        // checker's own SignedProperties digest, inclusive C14N only, does not apply: pyasice
        // names another transform.)
        let pyasice = try pyasiceCheck(container)
        XCTAssertTrue(pyasice.stdout.contains("pyasice verified signatures, time-stamps and OCSP: 1\n"), pyasice.stdout + pyasice.stderr)
    }
}

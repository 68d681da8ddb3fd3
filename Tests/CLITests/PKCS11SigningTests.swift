import Foundation
import TestTools
import XCTest

/// `asicfs tokens` and `asicfs sign --method pkcs11` against SoftHSM tokens the tests make with
/// the test PKI's keys (softhsm2-util, pkcs11-tool), found through p11-kit (Debian registers
/// SoftHSM in /usr/share/p11-kit/modules) and by module path; the signatures are checked by
/// `asicfs verify` and pyasice.
final class PKCS11SigningTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    static var services: TestServices? { shared.services }
    static var folder: String { shared.folder }

    override class func setUp() { shared = SharedTestServices(label: "cli-pkcs11") }
    override class func tearDown() { shared.stop() }

    var services: TestServices { Self.services! }
    var pki: TestPKI { services.pki }
    /// The PIN of every test token: digits that appear nowhere else (argv, paths, environment).
    static let pin = "735291"
    static let signerName = "JÕEORG,JAAK-KRISTJAN,38001085718"
    static let rsaSignerName = "RSA-MÄNNIK,MARI,48001010008"

    var settings: [String] {
        ["-o", "tsa-url=\(services.tsaURL)", "-o", "tsl=none", "-o", "trust-anchors=\(pki.root)",
         "-o", "cache-dir=\(Self.folder)/cache", "-o", "pinentry=none"]
    }

    private var tokens: SoftHSMTokens!

    override func setUpWithError() throws {
        try super.setUpWithError()
        XCTAssertNotNil(Self.services, "the loopback services started: \(Self.shared.failure ?? "")")
        tokens = try SoftHSMTokens(folder: path("softhsm"))
    }

    var ecIdentity: SoftHSMTokens.Identity {
        .init(key: pki.path("signer.key"), certificate: pki.signer, id: "01", label: "signing key")
    }
    var rsaIdentity: SoftHSMTokens.Identity {
        .init(key: pki.path("signer-rsa.key"), certificate: pki.signerRSA, id: "a1b2", label: "rsa key")
    }
    var authIdentity: SoftHSMTokens.Identity {
        .init(key: pki.path("auth.key"), certificate: pki.auth, id: "02", label: "auth key")
    }

    func unsignedContainer() throws -> String {
        assertSuccess(try asicfs(["create", "doc.asice", try write("contract.txt", "the contract\n"), try write(Self.umlautName, "umlauts\n")]))
        return path("doc.asice")
    }

    /// `asicfs` with the tokens' environment and, with `pin`, the PIN on descriptor 3.
    func run(_ arguments: [String], pin: String? = nil, environment: [String: String] = [:]) throws -> RunResult {
        let env = tokens.environment.merging(environment) { $1 }
        guard let pin else { return try asicfs(arguments, environment: env) }
        let pinFile = try write("pin-\(UUID().uuidString.prefix(6))", pin + "\n", in: root)
        return try runTool("/bin/sh", ["-c", "exec \"$@\" 3< \"$PIN_FILE\"", "sh", Self.binary] + arguments,
                           environment: env.merging(["PIN_FILE": pinFile]) { $1 })
    }

    func verify(_ container: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let verified = try asicfs(["verify", container] + settings)
        XCTAssertEqual(verified.status, 0, verified.stdout + verified.stderr, file: file, line: line)
        XCTAssertTrue(verified.stdout.hasSuffix("Result: VALID\n"), verified.stdout, file: file, line: line)
    }

    // MARK: - tokens

    func testTokensListsTokensThroughP11KitAndByModulePath() throws {
        try tokens.makeToken(label: "asicfs EC", pin: Self.pin, identities: [ecIdentity, authIdentity], caCertificates: [pki.issuing])
        let listed = try run(["tokens"])
        assertSuccess(listed)
        XCTAssertTrue(listed.stdout.contains("softhsm2 ("), listed.stdout)
        XCTAssertFalse(listed.stdout.contains("p11-kit-trust"), listed.stdout)
        XCTAssertTrue(listed.stdout.contains(": token \"asicfs EC\"\n"), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("    flags         login-required, pin-initialized\n"), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("    certificate   key 01 \"signing key\"\n"), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("      key         EC 384 bits\n"), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("      key usage   nonRepudiation\n      can sign    yes\n"), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("    certificate   key 02 \"auth key\"\n"), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("      key usage   digitalSignature, keyAgreement\n      can sign    no"), listed.stdout)
        // The CA certificate has no key: it is no candidate.
        XCTAssertFalse(listed.stdout.contains("key c0"), listed.stdout)

        let json = try run(["tokens", "module=\(SoftHSMTokens.module)", "--json"])
        assertSuccess(json)
        _ = try envelope(json, command: "tokens", status: 0)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
        XCTAssertEqual(object["format_version"] as? Int, 2)
        XCTAssertEqual(object["command"] as? String, "tokens")
        let modules = try XCTUnwrap(object["modules"] as? [[String: Any]])
        XCTAssertEqual(modules.map { $0["path"] as? String }, [SoftHSMTokens.module])
        let token = try XCTUnwrap((modules[0]["tokens"] as? [[String: Any]])?.first)
        XCTAssertEqual(token["label"] as? String, "asicfs EC")
        XCTAssertEqual(token["model"] as? String, "SoftHSM v2")
        XCTAssertEqual(token["login_required"] as? Bool, true)
        XCTAssertEqual(token["pin_pad"] as? Bool, false)
        XCTAssertNotNil(token["slot"] as? Int)
        let certificates = try XCTUnwrap(token["certificates"] as? [[String: Any]])
        XCTAssertEqual(certificates.map { $0["key_id"] as? String }.sorted { ($0 ?? "") < ($1 ?? "") }, ["01", "02"])
        let signing = try XCTUnwrap(certificates.first { $0["key_id"] as? String == "01" })
        XCTAssertEqual(signing["can_sign"] as? Bool, true)
        XCTAssertEqual(signing["key_type"] as? String, "EC")
        XCTAssertEqual(signing["key_bits"] as? Int, 384)
        XCTAssertTrue((signing["subject"] as? String)?.contains("PNOEE-38001085718") ?? false)
        XCTAssertTrue((signing["issuer"] as? String)?.contains("TEST of ESTEID-LIKE 2025") ?? false)
        XCTAssertNotNil(signing["not_after"] as? String)
    }

    /// OpenSC's module with no reader (pcscd unreachable) lists cleanly; a library that is not
    /// PKCS#11, or none at all, is one line.
    func testOpenSCWithoutReadersAndModulesThatDoNotLoad() throws {
        let opensc = try run(["tokens", "module=/usr/lib/x86_64-linux-gnu/opensc-pkcs11.so"])
        assertSuccess(opensc)
        XCTAssertEqual(opensc.stdout.split(separator: "\n").last, "  no token", opensc.stdout)
        assertFailure(try run(["tokens", "module=/usr/lib/x86_64-linux-gnu/libz.so.1"]),
                      mentions: ["libz.so.1 is not a PKCS#11 module"])
        assertFailure(try run(["tokens", "module=\(path("missing.so"))"]),
                      mentions: ["cannot load the PKCS#11 module", "missing.so", "No such file"])
        let json = try run(["tokens", "module=\(path("missing.so"))", "--json"])
        XCTAssertEqual(json.status, 1)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
        XCTAssertEqual(object["ok"] as? Bool, false)
        XCTAssertEqual((object["error"] as? [String: Any])?["code"] as? String, "token")
        assertFailure(try run(["tokens", "label=x"]), status: 2, mentions: ["tokens takes only module=PATH"])
    }

    // MARK: - Signing

    /// No selectors: the one token with one signing certificate is found through p11-kit. The
    /// issuing CA comes from the token (the only trust anchor is the root).
    func testSignsWithTheOnlyECTokenFoundThroughP11Kit() throws {
        try tokens.makeToken(label: "asicfs EC", pin: Self.pin, identities: [ecIdentity, authIdentity], caCertificates: [pki.issuing])
        let container = try unsignedContainer()
        let signed = try run(["sign", container, "--method", "pkcs11", "pin-fd=3", "role=Chair"] + settings, pin: Self.pin)
        assertSuccess(signed)
        XCTAssertEqual(signed.stdout, "signed: \(Self.signerName) S0 in META-INF/signatures0.xml, VALID\n")
        try verify(container)
        try checkWithPyasice(container, pin: Self.pin, arguments: ["pin-fd=3"])
    }

    /// RSA keys sign a DigestInfo with CKM_RSA_PKCS; chosen by module path, label and key id.
    func testSignsWithAnRSAKeyByModulePathLabelAndKey() throws {
        try tokens.makeToken(label: "asicfs RSA", pin: Self.pin, identities: [rsaIdentity], caCertificates: [pki.issuing])
        try tokens.makeToken(label: "asicfs EC", pin: Self.pin, identities: [ecIdentity])
        let container = try unsignedContainer()
        let signed = try run(["sign", container, "--method", "pkcs11", "module=\(SoftHSMTokens.module)", "label=asicfs RSA",
                              "key=A1B2", "pin-fd=3"] + settings, pin: Self.pin)
        assertSuccess(signed)
        XCTAssertEqual(signed.stdout, "signed: \(Self.rsaSignerName) S0 in META-INF/signatures0.xml, VALID\n")
        try verify(container)
        let xml = try runTool("/usr/bin/unzip", ["-p", container, "META-INF/signatures0.xml"])
        XCTAssertTrue(xml.stdout.contains("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"), xml.stdout)
        try checkWithPyasice(container, pin: Self.pin, arguments: ["label=asicfs RSA", "key=rsa key", "pin-fd=3"])
    }

    /// A certificate whose key is id-RSASSA-PSS (the RSA signer's key, certified again with a
    /// PSS SubjectPublicKeyInfo) makes asicfs sign with CKM_RSA_PKCS_PSS: RSA-PSS with SHA-256.
    func testAnRSAPSSCertificateSignsWithRSAPSS() throws {
        let pss = root.appendingPathComponent("pss").path
        let made = try runTool("/bin/bash", ["-c", """
            set -e; mkdir -p "$1"; cd "$1"
            openssl pkey -in "$2/signer-rsa.key" -pubout -outform der -out rsa.der
            # rsaEncryption + NULL -> id-RSASSA-PSS without parameters; the outer length shrinks by 2.
            python3 -c 'import sys; d=open("rsa.der","rb").read(); o=bytes.fromhex("300d06092a864886f70d0101010500"); b=d[d.index(o):].replace(o, bytes.fromhex("300b06092a864886f70d01010a"), 1); n=len(b); open("pss.der","wb").write(b"\\x30\\x82"+n.to_bytes(2,"big")+b)'
            openssl pkey -pubin -inform der -in pss.der -out pss-pub.pem
            openssl req -new -config "$2/pki.cnf" -key "$2/signer-rsa.key" -subj "/C=EE/CN=PSS,MARI,48001010008" -out pss.csr
            cd "$2" && openssl x509 -req -in "$1/pss.csr" -force_pubkey "$1/pss-pub.pem" -CA issuing.pem -CAkey issuing.key \
              -set_serial 4100 -days 30 -extfile pki.cnf -extensions signer_ext -out "$1/pss.pem" 2>/dev/null
            """, "bash", pss, pki.folder])
        XCTAssertEqual(made.status, 0, made.stderr)
        try tokens.makeToken(label: "asicfs PSS", pin: Self.pin, identities: [.init(key: pki.path("signer-rsa.key"),
                                                                                       certificate: pss + "/pss.pem", id: "05", label: "pss")])
        let listed = try run(["tokens"])
        XCTAssertTrue(listed.stdout.contains("      key         RSA-PSS 2048 bits\n"), listed.stdout)
        let container = try unsignedContainer()
        // Profile B: the test OCSP responder does not know this certificate. B is INVALID (not
        // long-term), but it is what was asked for: signed, and that is the only error.
        let signed = try run(["sign", container, "--method", "pkcs11", "pin-fd=3"] + settings + ["-o", "profile=B"], pin: Self.pin)
        assertSuccess(signed)
        XCTAssertTrue(signed.stdout.hasPrefix("signed: PSS,MARI,48001010008 S0 in META-INF/signatures0.xml, INVALID"), signed.stdout)
        let report = try asicfs(["verify", container] + settings)
        XCTAssertTrue(report.stdout.contains("  method           RSA-PSS with SHA-256\n"), report.stdout)
        let errors = report.stdout.split(separator: "\n").filter { $0.hasPrefix("  invalid:") }
        XCTAssertEqual(errors.count, 1, report.stdout)
        XCTAssertTrue(errors.first?.contains("not a long-term signature") == true, report.stdout)
    }

    func testTwoTokensAreAmbiguousAndTheErrorNamesBoth() throws {
        try tokens.makeToken(label: "first token", pin: Self.pin, identities: [ecIdentity], caCertificates: [pki.issuing])
        try tokens.makeToken(label: "second token", pin: Self.pin, identities: [rsaIdentity], caCertificates: [pki.issuing])
        let container = try unsignedContainer()
        let before = try read(container)
        let ambiguous = try run(["sign", container, "--method", "pkcs11", "pin-fd=3"] + settings, pin: Self.pin)
        assertFailure(ambiguous, mentions: ["several certificates can sign", "token \"first token\"", Self.signerName,
                                            "token \"second token\"", Self.rsaSignerName, "label="])
        XCTAssertEqual(try read(container), before)
        let chosen = try run(["sign", container, "--method", "pkcs11", "label=second token", "pin-fd=3"] + settings, pin: Self.pin)
        assertSuccess(chosen)
        XCTAssertTrue(chosen.stdout.contains(Self.rsaSignerName), chosen.stdout)
        assertFailure(try run(["sign", container, "--method", "pkcs11", "label=third"] + settings),
                      mentions: ["no token labelled \"third\"", "first token", "second token"])
        assertFailure(try run(["sign", container, "--method", "pkcs11", "label=first token", "key=ff"] + settings),
                      mentions: ["no certificate with the key label or id \"ff\""])
    }

    func testATokenWhoseOnlyCertificateLacksNonRepudiationIsRefused() throws {
        try tokens.makeToken(label: "auth only", pin: Self.pin, identities: [authIdentity])
        let container = try unsignedContainer()
        let before = try read(container)
        assertFailure(try run(["sign", container, "--method", "pkcs11", "pin-fd=3"] + settings, pin: Self.pin),
                      mentions: ["no certificate for signing on token \"auth only\"", "non-repudiation"])
        XCTAssertEqual(try read(container), before)
        XCTAssertFalse(try tokens.flags(of: "auth only").contains("count low"), "no login was tried")
    }

    func testAWrongPINSaysSoAndLeavesTheContainerUnchanged() throws {
        try tokens.makeToken(label: "asicfs EC", pin: Self.pin, identities: [ecIdentity], caCertificates: [pki.issuing])
        let container = try unsignedContainer()
        let before = try read(container)
        let wrong = try run(["sign", container, "--method", "pkcs11", "pin-fd=3"] + settings, pin: "000000")
        assertFailure(wrong, mentions: ["wrong PIN for the token \"asicfs EC\"", "nothing was signed"])
        XCTAssertFalse(wrong.stderr.contains("000000"), wrong.stderr)
        XCTAssertEqual(try read(container), before)
        XCTAssertTrue(try tokens.flags(of: "asicfs EC").contains("user PIN count low"))
        // A PIN the token's length rules refuse never reaches the token.
        assertFailure(try run(["sign", container, "--method", "pkcs11", "pin-fd=3"] + settings, pin: "12"),
                      mentions: ["PIN must be"])
        assertFailure(try run(["sign", container, "--method", "pkcs11", "pin-fd=x"] + settings), status: 2,
                      mentions: ["pin-fd= takes a descriptor number"])
    }

    /// pinentry (a fake one speaking Assuan) asks: SETDESC names the token and the signer, and
    /// the PIN reaches it neither through argv nor the environment.
    func testPinentryAsksWithTheTokenAndSignerNamed() throws {
        try tokens.makeToken(label: "asicfs EC", pin: Self.pin, identities: [ecIdentity], caCertificates: [pki.issuing])
        let container = try unsignedContainer()
        let log = root.appendingPathComponent("pinentry.log").path
        let pinentry = root.appendingPathComponent("fake-pinentry").path
        try FakePinentry.write(to: pinentry, pin: Self.pin, log: log)
        let signed = try run(["sign", container, "--method", "pkcs11"] + settings + ["-o", "pinentry=\(pinentry)"])
        assertSuccess(signed)
        let received = try String(contentsOfFile: log, encoding: .utf8)
        let lines = received.split(separator: "\n").map(String.init)
        let description = try XCTUnwrap(lines.first { $0.hasPrefix("SETDESC ") }, received)
        XCTAssertTrue(description.contains("asicfs EC") && description.contains(Self.signerName), description)
        XCTAssertTrue(lines.contains("SETPROMPT PIN:"), received)
        XCTAssertTrue(lines.contains("GETPIN"), received)
        XCTAssertTrue(received.contains("PARENT-ENV "), received)
        XCTAssertFalse(received.contains(Self.pin), "the PIN is in no command line or environment: \(received)")
        try verify(container)
    }

    /// Cancel in pinentry: one line, the container unchanged, and no C_Login was tried (a wrong
    /// PIN would set SoftHSM's "user PIN count low").
    func testCancelInPinentryTriesNoLogin() throws {
        try tokens.makeToken(label: "asicfs EC", pin: Self.pin, identities: [ecIdentity], caCertificates: [pki.issuing])
        let container = try unsignedContainer()
        let before = try read(container)
        let pinentry = root.appendingPathComponent("cancelling-pinentry").path
        try FakePinentry.write(to: pinentry, pin: nil, log: root.appendingPathComponent("pinentry.log").path)
        let cancelled = try run(["sign", container, "--method", "pkcs11"] + settings + ["-o", "pinentry=\(pinentry)"])
        assertFailure(cancelled, mentions: ["PIN entry was cancelled", "nothing was signed"])
        XCTAssertEqual(try read(container), before)
        XCTAssertFalse(try tokens.flags(of: "asicfs EC").contains("count low"))
    }

    /// Signs a fresh container with the RSA OCSP responder (pyasice checks only RSA-signed OCSP)
    /// and runs the pyasice checker on it.
    func checkWithPyasice(_ original: String, pin: String, arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let environment = ProcessInfo.processInfo.environment
        let venv = environment["ASICFS_PYASICE_VENV"]
            ?? ((environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")) + "/asicfs/pyasice-venv")
        guard FileManager.default.isExecutableFile(atPath: venv + "/bin/python") else {
            return XCTFail("pyasice is not installed at \(venv): run scripts/setup-pyasice.sh (make test does)", file: file, line: line)
        }
        assertSuccess(try asicfs(["create", "for-pyasice.asice", try write("data.txt", "for pyasice\n")]), file: file, line: line)
        let signed = try run(["sign", path("for-pyasice.asice"), "--method", "pkcs11"] + arguments + settings
                             + ["-o", "ocsp-url=\(services.ocspRSAURL)"], pin: pin)
        assertSuccess(signed, file: file, line: line)
        let checker = Self.packageRoot.path + "/Tests/SignatureTests/Interop/pyasice_check.py"
        let result = try runTool(venv + "/bin/python", [checker, path("for-pyasice.asice")])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr, file: file, line: line)
        XCTAssertTrue(result.stdout.hasSuffix("ALL OK\n"), result.stdout, file: file, line: line)
    }
}

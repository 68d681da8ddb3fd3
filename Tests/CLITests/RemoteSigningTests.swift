import Foundation
import TestTools
import XCTest

/// Remote signing over the CSC API end to end: the real binary, the CSC simulator of
/// contrib/simulators (one that asks for a client certificate, one that requires it), the
/// loopback test PKI, TSA and OCSP. The trust anchor is the root only: the issuing CA comes
/// from credentials/info's chain.
final class RemoteSigningTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedCSCServices!

    override class func setUp() { shared = SharedCSCServices(label: "cli-remote") }
    override class func tearDown() { shared.stop() }

    override func setUpWithError() throws {
        try super.setUpWithError()
        if let failure = Self.shared.failure { throw TestSetupError(failure) }
    }

    var services: TestServices { Self.shared.services! }
    var simulator: CSCSimulator { Self.shared.simulator! }
    var mutualTLS: CSCSimulator { Self.shared.mutualTLS! }

    /// Validation and LT settings, and the service (no login, no client identity yet).
    func settings(_ service: CSCSimulator? = nil) -> [String] {
        let service = service ?? simulator
        return ["-o", "tsa-url=\(services.tsaURL)", "-o", "tsl=none", "-o", "trust-anchors=\(services.pki.root)",
                "-o", "cache-dir=\(Self.shared.folder)/cache", "-o", "pinentry=none",
                "-o", "remote.url=\(service.url)", "-o", "remote.tls-cert=\(service.tlsCertificate)"]
    }

    /// `auth/login` as `user` with the password in a file.
    func login(_ user: String = "alice", password: String = CSCSimulator.alicePassword) throws -> [String] {
        ["-o", "remote.username=\(user)", "-o", "remote.password-file=\(try write("password-\(UUID().uuidString.prefix(6))", password + "\n"))"]
    }

    /// The PKCS#12 client identity of `name`, with its passphrase in a file.
    func identity(_ name: String = "alice", passphrase: String = CSCSimulator.clientPassphrase) throws -> [String] {
        ["-o", "remote.client-identity=\(simulator.clientIdentity(name))",
         "-o", "remote.client-identity-passphrase-file=\(try write("identity-pass-\(UUID().uuidString.prefix(6))", passphrase + "\n"))"]
    }

    func unsignedContainer(_ name: String = "doc.asice") throws -> String {
        let files = [try write("contract-\(name).txt", "the contract\n"), try write(Self.umlautName, "umlauts\n")]
        assertSuccess(try asicfs(["create", name] + files))
        return path(name)
    }

    /// asicfs with secrets on descriptors 3, 4, ... (read from files by the shell: never in argv
    /// or the environment).
    func asicfs(_ arguments: [String], secrets: [String]) throws -> RunResult {
        var redirections = ""
        for (index, secret) in secrets.enumerated() {
            redirections += " \(index + 3)<'\(try write("secret-\(UUID().uuidString.prefix(8))", secret + "\n"))'"
        }
        return try runTool("/bin/bash", ["-c", "exec \"$@\"" + redirections, "bash", Self.binary] + arguments)
    }

    /// The simulator's log lines after the first `since` ones.
    func requests(_ service: CSCSimulator, since: Int) -> [[String: Any]] { Array(service.requests().dropFirst(since)) }

    // MARK: - Signing

    func testRSAImplicitAndECExplicitPINWithSCAL2SignaturesAreValid() throws {
        let container = try unsignedContainer()
        let start = simulator.requests().count
        let rsa = try asicfs(["sign", container, "--method", "remote", "credential=alice-rsa"] + settings() + login())
        assertSuccess(rsa)
        XCTAssertEqual(rsa.stdout, "signed: MÄGI,ALICE-ÕIE,48001010005 S0 in META-INF/signatures0.xml, VALID\n")
        let ec = try asicfs(["sign", container, "--method", "remote", "credential=alice-ec", "pin-fd=3"] + settings() + login(),
                            secrets: [CSCSimulator.alicePIN])
        assertSuccess(ec)
        XCTAssertTrue(ec.stdout.hasSuffix("S1 in META-INF/signatures1.xml, VALID\n"), ec.stdout)

        let verified = try asicfs(["verify", container, "-o", "tsl=none", "-o", "trust-anchors=\(services.pki.root)"])
        assertSuccess(verified)
        XCTAssertTrue(verified.stdout.contains("method           RSA with SHA-256"), verified.stdout)
        XCTAssertTrue(verified.stdout.contains("method           ECDSA with SHA-384"), verified.stdout)
        XCTAssertTrue(verified.stdout.hasSuffix("Result: VALID\n"), verified.stdout)

        let calls = requests(simulator, since: start)
        XCTAssertEqual(calls.compactMap { $0["method"] as? String }, [
            "auth/login", "credentials/info", "credentials/authorize", "signatures/signHash", "auth/revoke",
            "auth/login", "credentials/info", "credentials/authorize", "signatures/signHash", "auth/revoke",
        ])
        XCTAssertTrue(calls.filter { $0["method"] as? String != "auth/login" }.allSatisfy { $0["how"] as? String == "bearer" })
        // SCAL 2 binds the SAD to the hash: the EC authorization carried it, the RSA one did not.
        let authorizations = calls.filter { $0["method"] as? String == "credentials/authorize" }
        XCTAssertEqual(authorizations.map { $0["credential"] as? String }, ["alice-rsa", "alice-ec"])
        XCTAssertEqual(authorizations.map { $0["hashes"] as? Int }, [0, 1])
    }

    func testPlainECDSACredentialAndTheOnlyCredentialOfAnAccount() throws {
        let container = try unsignedContainer()
        // The key offers only BSI plain ECDSA: its values are r||s already.
        assertSuccess(try asicfs(["sign", container, "--method", "remote", "credential=alice-ec-plain"] + settings() + login()))
        // bob has one credential: no credential= needed.
        let bob = try asicfs(["sign", container, "--method", "remote", "pin-fd=3"] + settings()
                             + login("bob", password: CSCSimulator.bobPassword), secrets: [CSCSimulator.bobPIN])
        assertSuccess(bob)
        XCTAssertTrue(bob.stdout.hasPrefix("signed: TAMM,BOB,38001010009 S1"), bob.stdout)
        let verified = try asicfs(["verify", container, "-o", "tsl=none", "-o", "trust-anchors=\(services.pki.root)"])
        assertSuccess(verified)
        XCTAssertTrue(verified.stdout.contains("method           ECDSA with SHA-256"), verified.stdout)
    }

    func testSeveralCredentialsWithoutCredentialAreListedAndNothingIsAuthorized() throws {
        let container = try unsignedContainer()
        let before = try read(container)
        let start = simulator.requests().count
        let result = try asicfs(["sign", container, "--method", "remote"] + settings() + login())
        assertFailure(result, status: 2, mentions: ["8 credentials", "credential=ID"] + CSCSimulator.aliceCredentials)
        XCTAssertEqual(try read(container), before)
        let methods = requests(simulator, since: start).compactMap { $0["method"] as? String }
        XCTAssertFalse(methods.contains("credentials/authorize"), "\(methods)")
        XCTAssertFalse(methods.contains("signatures/signHash"), "\(methods)")
    }

    func testPyasiceAcceptsRemoteRSAAndECSignatures() throws {
        let environment = ProcessInfo.processInfo.environment
        let venv = environment["ASICFS_PYASICE_VENV"]
            ?? ((environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")) + "/asicfs/pyasice-venv")
        guard FileManager.default.isExecutableFile(atPath: venv + "/bin/python") else {
            return XCTFail("pyasice is not installed at \(venv): run scripts/setup-pyasice.sh (make test does)")
        }
        let checker = Self.packageRoot.path + "/Tests/SignatureTests/Interop/pyasice_check.py"
        // pyasice verifies only RSA-signed OCSP responses: the test PKI's RSA responder.
        let ocsp = ["-o", "ocsp-url=\(services.ocspRSAURL)"]
        for (credential, secrets) in [("alice-rsa", [String]()), ("alice-ec", [CSCSimulator.alicePIN])] {
            let container = try unsignedContainer("\(credential).asice")
            let pin = secrets.isEmpty ? [] : ["pin-fd=3"]
            assertSuccess(try asicfs(["sign", container, "--method", "remote", "credential=\(credential)"] + pin
                                     + settings() + login() + ocsp, secrets: secrets))
            let result = try runTool(venv + "/bin/python", [checker, container])
            XCTAssertEqual(result.status, 0, credential + ": " + result.stdout + result.stderr)
            XCTAssertTrue(result.stdout.hasSuffix("ALL OK\n"), result.stdout)
        }
    }

    // MARK: - Mutual TLS

    func testMutualTLSWithoutLoginAndWithLogin() throws {
        let container = try unsignedContainer()
        var start = mutualTLS.requests().count
        // No username: the client certificate says who signs (authType TLS), no token is sent.
        let plain = try asicfs(["sign", container, "--method", "remote", "credential=alice-rsa"] + settings(mutualTLS) + identity())
        assertSuccess(plain)
        var calls = requests(mutualTLS, since: start)
        XCTAssertEqual(calls.compactMap { $0["method"] as? String }, ["credentials/info", "credentials/authorize", "signatures/signHash"])
        XCTAssertTrue(calls.allSatisfy { $0["how"] as? String == "tls" && $0["client"] as? String == "alice" }, "\(calls)")

        // With a username the login rides on the mutual TLS.
        start = mutualTLS.requests().count
        let both = try asicfs(["sign", container, "--method", "remote", "credential=alice-ec", "pin-fd=3"] + settings(mutualTLS)
                              + identity() + login(), secrets: [CSCSimulator.alicePIN])
        assertSuccess(both)
        calls = requests(mutualTLS, since: start)
        XCTAssertEqual(calls.first?["method"] as? String, "auth/login")
        XCTAssertTrue(calls.dropFirst().allSatisfy { $0["how"] as? String == "bearer" && $0["client"] as? String == "alice" }, "\(calls)")
        assertSuccess(try asicfs(["verify", container, "-o", "tsl=none", "-o", "trust-anchors=\(services.pki.root)"]))

        let listed = try asicfs(["remote", "credentials"] + settings(mutualTLS) + identity())
        assertSuccess(listed)
        XCTAssertTrue(listed.stdout.hasPrefix("alice-rsa\n"), listed.stdout)
    }

    // MARK: - Listing

    func testCredentialsListingFollowsEveryPageAndNeverAuthorizes() throws {
        let start = simulator.requests().count
        let text = try asicfs(["remote", "credentials"] + settings() + login())
        assertSuccess(text)
        for id in CSCSimulator.aliceCredentials { XCTAssertTrue(text.stdout.contains("\(id)\n"), "\(id) missing: \(text.stdout)") }
        XCTAssertTrue(text.stdout.contains("""
            alice-ec
              subject          CN=MÄGI\\,ALICE-ÕIE\\,48001010005,serialNumber=PNOEE-48001010005,GN=ALICE-ÕIE,SN=MÄGI,C=EE
              issuer           CN=TEST of ESTEID-LIKE 2025,O=asicfs test,C=EE
              key              EC P-384 (enabled)
            """), text.stdout)
        XCTAssertTrue(text.stdout.contains("  authorization    explicit (numeric PIN), SCAL 2\n"), text.stdout)
        XCTAssertTrue(text.stdout.contains("  authorization    implicit (the service asks you), SCAL 1\n"), text.stdout)
        let calls = requests(simulator, since: start)
        let pages = calls.filter { $0["method"] as? String == "credentials/list" }
        XCTAssertEqual(pages.map { $0["pageToken"] as? String }, [nil, "page-3", "page-6"], "page size 3: three pages")
        let methods = Set(calls.compactMap { $0["method"] as? String })
        XCTAssertEqual(methods, ["auth/login", "credentials/list", "credentials/info", "auth/revoke"])

        let json = try asicfs(["remote", "credentials", "--json"] + settings() + login())
        assertSuccess(json)
        _ = try envelope(json, command: "remote credentials", status: 0)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
        let credentials = try XCTUnwrap(object["credentials"] as? [[String: Any]])
        XCTAssertEqual(credentials.compactMap { $0["id"] as? String }, CSCSimulator.aliceCredentials)
        let ec = try XCTUnwrap(credentials.first { $0["id"] as? String == "alice-ec" })
        XCTAssertEqual(ec["key_algorithm"] as? String, "EC P-384")
        XCTAssertEqual(ec["auth_mode"] as? String, "explicit")
        XCTAssertEqual(ec["pin"] as? String, "numeric")
        XCTAssertEqual(ec["scal"] as? String, "2")
        XCTAssertEqual(ec["issuer"] as? String, "CN=TEST of ESTEID-LIKE 2025,O=asicfs test,C=EE")
        XCTAssertTrue((ec["subject"] as? String)?.contains("GN=ALICE-ÕIE") == true, "\(ec)")
        XCTAssertNotNil(ec["not_before"] as? String)
        XCTAssertNotNil(ec["not_after"] as? String)
        let rsa = try XCTUnwrap(credentials.first)
        XCTAssertEqual(rsa["key_algorithm"] as? String, "RSA 2048")
        XCTAssertTrue(rsa["pin"] is NSNull)
    }

    // MARK: - Failures

    func testEveryFailureIsOneLineExitOneAndTheContainerIsUnchanged() throws {
        let container = try unsignedContainer()
        let before = try read(container)
        func refused(_ arguments: [String], secrets: [String] = [], mentions: [String], file: StaticString = #filePath,
                     line: UInt = #line) throws {
            let result = secrets.isEmpty ? try asicfs(["sign", container, "--method", "remote"] + arguments)
                : try asicfs(["sign", container, "--method", "remote"] + arguments, secrets: secrets)
            assertFailure(result, mentions: mentions, file: file, line: line)
            XCTAssertEqual(try read(container), before, "the container is byte-identical", file: file, line: line)
        }
        try refused(["credential=alice-ec", "pin-fd=3"] + settings() + login(), secrets: ["111111"],
                    mentions: ["wrong PIN for the credential 'alice-ec'"])
        try refused(["credential=alice-rsa"] + settings() + login(password: "not-the-password"),
                    mentions: ["refused the user name or password", "HTTP 401"])
        try refused(["credential=nosuch"] + settings() + login(), mentions: ["no credential 'nosuch'"])
        try refused(["credential=alice-bad-request"] + settings() + login(),
                    mentions: ["invalid_request", "The credential is suspended by the operator (test)"])
        try refused(["credential=alice-expired-sad"] + settings() + login(), mentions: ["(SAD) expired"])
        try refused(["credential=alice-empty"] + settings() + login(), mentions: ["returned no signature", "empty signatures list"])
        try refused(["credential=alice-wrong-key"] + settings() + login(),
                    mentions: ["signature value returned by remote does not verify with the signer's certificate"])
        let started = Date()
        try refused(["credential=alice-hang", "-o", "remote.timeout=2"] + settings() + login(),
                    mentions: ["did not answer within 2 s (remote.timeout)"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 20)

        // A service whose certificate is not the pinned one hears nothing.
        let sent = simulator.methods().count
        try refused(["credential=alice-rsa"] + settings() + login() + ["-o", "remote.tls-cert=\(services.pki.root)"],
                    mentions: ["not the one pinned in remote.tls-cert", "nothing was sent"])
        XCTAssertEqual(simulator.methods().count, sent, "no request reached the service")

        // A service that requires a client certificate, over TLS 1.3 (curl 56) and TLS 1.2 (curl 35).
        try refused(["credential=alice-rsa"] + settings(mutualTLS) + login(), mentions: ["requires a TLS client certificate"])
        let tls12 = try Self.shared.extra("tls12", options: ["--client-certificates", "required", "--tls-max", "1.2"])
        defer { tls12.stop() }
        try refused(["credential=alice-rsa"] + settings(tls12) + login(), mentions: ["requires a TLS client certificate"])
        XCTAssertEqual(tls12.methods(), [], "nothing reached the TLS 1.2 service")
        try refused(["credential=alice-rsa"] + settings(mutualTLS) + identity("stranger"),
                    mentions: ["refused the TLS client certificate of remote.client-identity"])
        try refused(["credential=alice-rsa"] + settings(mutualTLS) + identity(passphrase: "wrong"),
                    mentions: ["wrong passphrase for the TLS client identity alice-client.p12", "nothing was sent"])

        // Form errors are usage errors (exit 2), found before anything is read or sent.
        assertFailure(try asicfs(["sign", container, "--method", "remote", "credential="] + settings()), status: 2,
                      mentions: ["credential= takes a credential ID"])
        assertFailure(try asicfs(["sign", container, "--method", "remote", "credential=x", "-o", "pinentry=none"]),
                      mentions: ["set remote.url"])
        XCTAssertEqual(try read(container), before)
    }

    // MARK: - Secrets

    /// A fake pinentry (Assuan) that answers the identity's passphrase and the PIN by prompt,
    /// slowly enough to be seen running, and logs what it gets, its environment and its
    /// parent's environment and command line.
    func fakePinentry() throws -> (program: String, log: String) {
        let log = path("pinentry.log")
        let program = try write("fake-pinentry", """
            #!/bin/sh
            echo "OK Pleased to meet you"
            { echo "ARGV $0 $*"; tr '\\0' '\\n' < /proc/$PPID/environ | sed 's/^/PARENT-ENV /'; \
              tr '\\0' ' ' < /proc/$PPID/cmdline | sed 's/^/PARENT-ARGV /'; echo; env | sed 's/^/ENV /'; } >> '\(log)'
            prompt=""
            while IFS= read -r line; do
              echo "$line" >> '\(log)'
              case "$line" in
                "SETPROMPT Passphrase:") prompt=passphrase; echo OK ;;
                "SETPROMPT PIN:") prompt=pin; echo OK ;;
                GETPIN) sleep 0.4
                  if [ "$prompt" = passphrase ]; then echo "D \(CSCSimulator.clientPassphrase)"; else echo "D \(CSCSimulator.alicePIN)"; fi
                  echo OK ;;
                BYE) echo OK; exit 0 ;;
                *) echo OK ;;
              esac
            done
            """)
        chmod(program, 0o755)
        return (program, log)
    }

    /// The command lines and environments of `pid` and every process below it.
    func processTexts(_ pid: pid_t) -> String {
        var text = ""
        var pending = [pid]
        while let next = pending.popLast() {
            for name in ["cmdline", "environ"] {
                if let data = FileManager.default.contents(atPath: "/proc/\(next)/\(name)") {
                    text += String(decoding: data.map { $0 == 0 ? 0x0A : $0 }, as: UTF8.self) + "\n"
                }
            }
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(next)/task")) ?? []
            for task in tasks {
                let children = (try? String(contentsOfFile: "/proc/\(next)/task/\(task)/children", encoding: .utf8)) ?? ""
                pending += children.split(separator: " ").compactMap { pid_t($0) }
            }
        }
        return text
    }

    func testSecretsStayOutOfArgvEnvironmentOutputAndLogs() throws {
        let slow = try Self.shared.extra("slow", options: ["--client-certificates", "required", "--sign-delay", "2"])
        defer { slow.stop() }
        let container = try unsignedContainer()
        let pinentry = try fakePinentry()
        // The identity's passphrase and the PIN come from pinentry, the password from its file.
        let arguments = ["sign", container, "--method", "remote", "credential=alice-ec"] + settings(slow) + (try login())
            + ["-o", "remote.client-identity=\(simulator.clientIdentity("alice"))", "-o", "pinentry=\(pinentry.program)"]
        let (process, stderrURL) = try startAsicfs(arguments)
        var seen = ""
        while process.isRunning {
            seen += processTexts(process.processIdentifier)
            usleep(20_000)
        }
        process.waitUntilExit()
        let stderr = (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
        XCTAssertEqual(process.terminationStatus, 0, stderr)
        XCTAssertTrue(seen.contains("remote.url="), "asicfs's own command line was read")
        XCTAssertTrue(seen.contains(pinentry.program), "the pinentry child was seen while it ran")
        XCTAssertTrue(slow.requests().contains { $0["method"] as? String == "auth/login" && $0["client"] as? String == "alice" })

        let basic = Data("alice:\(CSCSimulator.alicePassword)".utf8).base64EncodedString()
        let secrets = [CSCSimulator.alicePassword, basic, CSCSimulator.alicePIN, CSCSimulator.clientPassphrase]
        let pinentryLog = try String(contentsOfFile: pinentry.log, encoding: .utf8)
        XCTAssertTrue(pinentryLog.contains("SETPROMPT PIN:") && pinentryLog.contains("SETPROMPT Passphrase:"), pinentryLog)
        let simulatorLog = try String(contentsOfFile: slow.logFile, encoding: .utf8)
        for secret in secrets {
            XCTAssertFalse(seen.contains(secret), "a secret in the command line or environment of asicfs or a child")
            XCTAssertFalse(stderr.contains(secret), "a secret on stderr")
            XCTAssertFalse(pinentryLog.contains(secret), "a secret in pinentry's environment, arguments or parent's")
            XCTAssertFalse(simulatorLog.contains(secret), "a secret in the service's log")
            for file in tree(work.path) where !file.hasPrefix("secret-") && !file.hasPrefix("password-") && !file.hasPrefix("fake-pinentry")
                && !file.hasPrefix("identity-pass-") {
                let data = FileManager.default.contents(atPath: path(file)) ?? Data()
                XCTAssertNil(data.range(of: Data(secret.utf8)), "a secret in \(file)")
            }
        }
    }

    // MARK: - Help

    func testHelpTextsDescribeRemoteSigning() throws {
        let remote = try asicfs(["remote", "--help"])
        assertSuccess(remote)
        XCTAssertTrue(remote.stdout.contains("credentials [--json]"), remote.stdout)
        XCTAssertTrue(remote.stdout.contains("remote.client-identity"), remote.stdout)
        let sign = try asicfs(["sign", "--help"])
        XCTAssertTrue(sign.stdout.contains("remote: [credential=ID] [pin-fd=N]"), sign.stdout)
        let global = try asicfs(["--help"])
        for key in ["remote.username", "remote.password-file", "remote.timeout", "remote credentials [--json]"] {
            XCTAssertTrue(global.stdout.contains(key), key)
        }
        assertFailure(try asicfs(["remote", "keys"]), status: 2, mentions: ["unknown remote subcommand 'keys'"])
    }
}

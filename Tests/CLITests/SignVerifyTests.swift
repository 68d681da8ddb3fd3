import Foundation
import TestTools
import XCTest

/// `asicfs sign` and `asicfs verify` end to end: the real binary, the loopback test PKI, TSA and
/// OCSP (contrib/testpki), and trusted lists made for that PKI (contrib/testpki/mklists.py).
final class SignVerifyTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    static var services: TestServices? { shared.services }
    static var folder: String { shared.folder }

    override class func setUp() { shared = SharedTestServices(label: "cli-signing") }
    override class func tearDown() { shared.stop() }

    var services: TestServices { Self.services! }
    var settings: [String] {
        ["-o", "tsa-url=\(services.tsaURL)", "-o", "tsl=none", "-o", "trust-anchors=\(services.pki.root)",
         "-o", "cache-dir=\(Self.folder)/cache"]
    }

    /// Test lists trusting the PKI's CA, OCSP responder and TSA, made in the test's folder.
    func trustLists(caQualifier: String? = nil) throws -> TestTrustLists {
        try TestTrustLists.make(for: services.pki, in: root.path + "/lists-\(caQualifier ?? "qscd")", caQualifier: caQualifier)
    }

    /// An ASiC-S of test1.txt time-stamped by the loopback TSA; returns it and the token's time.
    func timeStampedASiCS() throws -> (path: String, time: String) {
        let token = try TestContainers.timeStampToken(over: TestContainers.payload, tsaURL: services.tsaURL, in: root.path)
        try TestContainers.timeStamped(path("test.asics"), token: token)
        let tst = try write("token.tst", token, in: root)
        let text = try runTool("/usr/bin/openssl", ["ts", "-reply", "-token_in", "-in", tst, "-text"])
        let line = try XCTUnwrap(text.stdout.split(separator: "\n").first { $0.hasPrefix("Time stamp: ") }, text.stdout)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "MMM d HH:mm:ss yyyy zzz"
        let spoken = line.dropFirst("Time stamp: ".count).split(separator: " ").joined(separator: " ")
        let date = try XCTUnwrap(formatter.date(from: spoken), String(spoken))
        let iso = ISO8601DateFormatter()
        return (path("test.asics"), iso.string(from: date))
    }

    /// `source` with the signer's certificate in KeyInfo and SigningCertificate swapped for
    /// another person's (the revoked test signer, same key type): the signature value was made
    /// by a key that is not the named signer's.
    func keySubstituted(_ source: String) throws -> String {
        let forged = path("forged_lt.asice")
        let result = try runTool("/usr/bin/env", ["python3", "-c", """
            import base64, hashlib, subprocess, sys, zipfile
            def der(pem): return subprocess.run(['openssl', 'x509', '-in', pem, '-outform', 'DER'], capture_output=True, check=True).stdout
            signer, other = der(sys.argv[3]), der(sys.argv[4])
            b64 = lambda data: base64.b64encode(data).decode()
            with zipfile.ZipFile(sys.argv[1]) as old, zipfile.ZipFile(sys.argv[2], 'w') as new:
                for info in old.infolist():
                    data = old.read(info)
                    if info.filename == 'META-INF/signatures0.xml':
                        text = data.decode()
                        assert b64(signer) in text
                        text = text.replace(b64(signer), b64(other))
                        text = text.replace(b64(hashlib.sha256(signer).digest()), b64(hashlib.sha256(other).digest()))
                        data = text.encode()
                    new.writestr(info, data)
            """, source, forged, services.pki.signer, services.pki.revoked])
        XCTAssertEqual(result.status, 0, result.stderr)
        return forged
    }

    func unsignedContainer() throws -> String {
        let files = [try write("contract.txt", "the contract\n"), try write(Self.awkwardName, "awkward\n"),
                     try write(Self.umlautName, "umlauts\n")]
        assertSuccess(try asicfs(["create", "doc.asice"] + files))
        return path("doc.asice")
    }

    func passphraseFile(_ text: String) throws -> String { try write("pass-\(text)", text + "\n") }

    func testSignThenVerifyTextAndJSON() throws {
        XCTAssertNotNil(Self.services, "the loopback services started")
        let container = try unsignedContainer()
        let signed = try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)",
                                 "passphrase-file=\(try passphraseFile(TestPKI.passphrase))", "role=Chair", "city=Tartu"] + settings)
        assertSuccess(signed)
        XCTAssertEqual(signed.stdout, "signed: JÕEORG,JAAK-KRISTJAN,38001085718 S0 in META-INF/signatures0.xml, VALID\n")

        let text = try asicfs(["verify", container] + settings)
        assertSuccess(text)
        XCTAssertTrue(text.stdout.contains("Signature 0 (S0, META-INF/signatures0.xml): VALID"), text.stdout)
        XCTAssertTrue(text.stdout.contains("roles            Chair"), text.stdout)
        XCTAssertTrue(text.stdout.hasSuffix("Result: VALID\n"), text.stdout)

        let json = try asicfs(["verify", container, "--json"] + settings)
        assertSuccess(json)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
        XCTAssertEqual(object["verdict"] as? String, "VALID")
        let signature = try XCTUnwrap((object["signatures"] as? [[String: Any]])?.first)
        XCTAssertEqual(signature["signer"] as? String, "JÕEORG,JAAK-KRISTJAN,38001085718")
        XCTAssertEqual(signature["profile"] as? String, "BES/time-stamp")
        XCTAssertEqual(signature["qualification"] as? String, "QES")
        XCTAssertEqual(Set(signature["signed_files"] as? [String] ?? []), ["contract.txt", Self.awkwardName, Self.umlautName])
        XCTAssertEqual((signature["errors"] as? [Any])?.count, 0)
        XCTAssertNotNil(signature["timestamp_time"] as? String)
        XCTAssertNotNil(signature["ocsp_produced_at"] as? String)

        // Signed data files are now frozen: add fails, the signature stays valid.
        let add = try asicfs(["add", container, try write("more.txt", "more\n")])
        assertFailure(add, mentions: ["signed"])
    }

    /// A container from elsewhere whose names hold a newline, a bidirectional override and a C1
    /// control: the signing's line and the report show them escaped, one field a line.
    func testHostileNamesAreEscapedInTheSigningLineAndTheReport() throws {
        XCTAssertNotNil(Self.services, "the loopback services started")
        let names = ["a\nResult: VALID", "invoice-\u{202E}fdp.exe", "csi-\u{9B}2J.txt"]
        let container = path("hostile.asice")
        try makeContainerWithPython(container, files: names.map { ($0, "data\n") })
        let signed = try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)",
                                 "passphrase-file=\(try passphraseFile(TestPKI.passphrase))"] + settings)
        assertSuccess(signed)
        XCTAssertEqual(signed.stdout, "signed: JÕEORG,JAAK-KRISTJAN,38001085718 S0 in META-INF/signatures0.xml, VALID\n")

        let text = try asicfs(["verify", container] + settings)
        assertSuccess(text)
        assertPrintable(text.stdoutData, allowingNewlines: true)
        let signedFiles = text.stdout.split(separator: "\n").filter { $0.hasPrefix("  signed files") }
        XCTAssertEqual(signedFiles, ["  signed files     a\\nResult: VALID, invoice-\\u{202E}fdp.exe, csi-\\u{009B}2J.txt"], text.stdout)
        XCTAssertEqual(text.stdout.split(separator: "\n").filter { $0.hasPrefix("Result:") }, ["Result: VALID"], text.stdout)

        let json = try asicfs(["verify", container, "--json"] + settings)
        assertSuccess(json)
        assertPrintable(json.stdoutData, allowingNewlines: true)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
        let signature = try XCTUnwrap((object["signatures"] as? [[String: Any]])?.first)
        XCTAssertEqual(signature["signed_files"] as? [String], names)
    }

    /// A signature document re-encoded as UTF-16 is the same XML (canonicalization works on the
    /// parsed document), so it validates as before, as libdigidocpp's Xerces reads it too.
    func testAUTF16SignatureDocumentValidates() throws {
        XCTAssertNotNil(Self.services, "the loopback services started")
        let container = try unsignedContainer()
        assertSuccess(try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)",
                                  "passphrase-file=\(try passphraseFile(TestPKI.passphrase))"] + settings))
        let recode = """
        import sys, zipfile
        source, target = sys.argv[1], sys.argv[2]
        with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, 'w') as new:
            for info in old.infolist():
                data = old.read(info)
                if info.filename == 'META-INF/signatures0.xml':
                    text = data.decode('utf-8')
                    assert text.startswith('<?xml') and 'encoding="UTF-8"' in text.split('?>', 1)[0]
                    data = text.replace('encoding="UTF-8"', 'encoding="UTF-16"', 1).encode('utf-16')
                new.writestr(info, data)
        """
        let recoded = path("utf16-signature.asice")
        let result = try runTool("/usr/bin/env", ["python3", "-c", recode, container, recoded])
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = try asicfs(["verify", recoded] + settings)
        assertSuccess(text)
        XCTAssertTrue(text.stdout.contains("Signature 0 (S0, META-INF/signatures0.xml): VALID"), text.stdout)
    }

    func testFailuresAreOneLineAndLeaveTheContainerUnchanged() throws {
        let container = try unsignedContainer()
        let before = try read(container)
        let wrong = try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)",
                                "passphrase-file=\(try passphraseFile("nope"))"] + settings)
        assertFailure(wrong, mentions: ["wrong passphrase for signer.p12"])
        let revoked = try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.revokedP12)",
                                  "passphrase-file=\(try passphraseFile(TestPKI.passphrase))"] + settings)
        assertFailure(revoked, mentions: ["revoked"])
        let noTSA = try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)",
                                "passphrase-file=\(try passphraseFile(TestPKI.passphrase))"] + settings + ["-o", "tsa-url=http://127.0.0.1:1/tsa"])
        assertFailure(noTSA, mentions: ["time-stamp", "could not connect to 127.0.0.1"])
        let badPhone = try asicfs(["sign", container, "--method", "mobile-id", "phone=37200000766", "idcode=60001019906"] + settings)
        assertFailure(badPhone, status: 2, mentions: ["mobile-id", "phone", "country code"])
        let badCode = try asicfs(["sign", container, "--method", "smart-id", "country=EE", "idcode=30303039915"] + settings)
        assertFailure(badCode, status: 2, mentions: ["smart-id", "check digit"])
        XCTAssertEqual(try read(container), before)
    }

    /// A signed container whose large data file has 32 overwritten bytes is INVALID, not a
    /// crash (the stream fails while the helper thread holds the previous buffer).
    func testADamagedLargeDataFileMakesTheSignatureInvalid() throws {
        let big = try write("big.txt", compressibleBytes(count: 6 << 20))
        assertSuccess(try asicfs(["create", "big.asice", big]))
        let container = path("big.asice")
        assertSuccess(try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)",
                                  "passphrase-file=\(try passphraseFile(TestPKI.passphrase))"] + settings))
        try DamagedContainer.corruptStream(of: "big.txt", in: container)
        let verify = try asicfs(["verify", container] + settings)
        XCTAssertEqual(verify.status, 1, verify.stderr)
        XCTAssertTrue(verify.stdout.contains("INVALID"), verify.stdout)
        XCTAssertTrue(verify.stdout.contains("big.txt"), verify.stdout)
        let json = try asicfs(["verify", container, "--json"] + settings)
        XCTAssertEqual(json.status, 1, json.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
        XCTAssertEqual(object["verdict"] as? String, "INVALID")
    }

    /// `asicfs remove C --signature N` (digidoc-tool remove parity): that signature's file goes,
    /// atomically; the others and the data files stay; bad numbers and ASiC-S are refused.
    func testRemovingOneSignatureFromTheCommandLine() throws {
        let container = try unsignedContainer()
        for _ in 0..<2 {
            assertSuccess(try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)",
                                      "passphrase-file=\(try passphraseFile(TestPKI.passphrase))"] + settings))
        }
        XCTAssertEqual(try dataFileNames(container).count, 3)
        assertSuccess(try asicfs(["remove", container, "--signature", "0"]))
        let listed = try listing(container)
        XCTAssertEqual((listed["signatures"] as? [[String: Any]])?.compactMap { $0["file"] as? String }, ["META-INF/signatures1.xml"])
        XCTAssertEqual(try dataFileNames(container).count, 3, "the data files stay")
        let verify = try asicfs(["verify", container] + settings)
        assertSuccess(verify)
        XCTAssertTrue(verify.stdout.contains("1 signature\n"), verify.stdout)

        let before = try read(container)
        assertFailure(try asicfs(["remove", container, "--signature", "3"]), mentions: ["no signature 3", "has 1"])
        assertFailure(try asicfs(["remove", container, "--signature", "x"]), status: 2, mentions: ["signature number"])
        assertFailure(try asicfs(["remove", container, "contract.txt", "--signature", "0"]), status: 2, mentions: ["CONTAINER only"])
        XCTAssertEqual(try read(container), before, "refusals change nothing")
        assertFailure(try asicfs(["remove", try timeStampedASiCS().path, "--signature", "0"]), mentions: ["ASiC-S"])
    }

    /// `asicfs extend`: an archive time-stamp for the LT signature, one line, VALID after.
    func testExtendAddsAnArchiveTimeStamp() throws {
        let container = try unsignedContainer()
        assertFailure(try asicfs(["extend", container] + settings), mentions: ["no LT signature"])
        assertSuccess(try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)",
                                  "passphrase-file=\(try passphraseFile(TestPKI.passphrase))"] + settings))
        let extended = try asicfs(["extend", container] + settings)
        assertSuccess(extended)
        XCTAssertEqual(extended.stdout, "extended: JÕEORG,JAAK-KRISTJAN,38001085718 S0 in META-INF/signatures0.xml, VALID (BES/time-stamp-archive)\n")
        let verify = try asicfs(["verify", container] + settings)
        assertSuccess(verify)
        XCTAssertTrue(verify.stdout.contains("profile          BES/time-stamp-archive"), verify.stdout)
        assertFailure(try asicfs(["extend", container, "--signature", "2"] + settings), mentions: ["no signature 2"])
        assertFailure(try asicfs(["extend", container] + settings + ["-o", "tsa-url=http://127.0.0.1:1/tsa"]),
                      mentions: ["time-stamp", "could not connect"])
        assertSuccess(try asicfs(["verify", container] + settings))
    }

    /// Each argument is one key=value, taken literally: spaces and apostrophes need only the
    /// shell's quoting, `role=` may repeat, and `~/` in a path parameter is the home folder.
    func testParametersAreOneArgumentEachWithSpacesApostrophesRolesAndTilde() throws {
        let container = try unsignedContainer()
        let home = root.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: services.pki.signerP12, toPath: home.path + "/my key.p12")
        try write("pass", TestPKI.passphrase + "\n", in: home)
        let signed = try asicfs(["sign", container, "--method", "pkcs12", "file=\(home.path)/my key.p12", "passphrase-file=~/pass",
                                 "role=Board member", "role=O'Brien's deputy", "city=Tartu linn"] + settings,
                                environment: ["HOME": home.path])
        assertSuccess(signed)
        let json = try asicfs(["verify", container, "--json"] + settings)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
        let signature = try XCTUnwrap((object["signatures"] as? [[String: Any]])?.first)
        XCTAssertEqual(signature["roles"] as? [String], ["Board member", "O'Brien's deputy"])
        XCTAssertEqual((signature["production_place"] as? [String: String])?["city"], "Tartu linn")
        // Quotes are not removed on the command line: they are part of the value.
        let quoted = try asicfs(["sign", container, "--method", "pkcs12", "file=\"\(home.path)/my key.p12\"", "passphrase-file=~/pass"] + settings,
                                environment: ["HOME": home.path])
        assertFailure(quoted, mentions: ["my key.p12"])
    }

    /// `--warnings=error` (digidoc-tool parity): VALID_WITH_WARNINGS exits 1; VALID still 0.
    func testWarningsAsErrors() throws {
        let container = try unsignedContainer()
        assertSuccess(try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)",
                                  "passphrase-file=\(try passphraseFile(TestPKI.passphrase))"] + settings))
        assertSuccess(try asicfs(["verify", container, "--warnings=error"] + settings))
        // A trusted list whose CA's keys are not on a qualified device (QCNoQSCD), the reference's
        // scenario: "OK (NonQSCD)", and "FAILED (NonQSCD)" with --warnings=error.
        let nonQSCD = try trustLists(caQualifier: "QCNoQSCD").settings(cache: root.path + "/cache-noqscd")
        let warned = try asicfs(["verify", container] + nonQSCD)
        assertSuccess(warned)
        XCTAssertTrue(warned.stdout.contains("NonQSCD"), warned.stdout)
        XCTAssertTrue(warned.stdout.hasSuffix("Result: VALID_WITH_WARNINGS\n"), warned.stdout)
        let strict = try asicfs(["verify", container, "--warnings=error"] + nonQSCD)
        XCTAssertEqual(strict.status, 1, strict.stdout)
        XCTAssertTrue(strict.stdout.hasSuffix("Result: VALID_WITH_WARNINGS\n"), strict.stdout)
        // digidoc-tool's --warnings=warning: warnings are reported, the exit status stays 0.
        let spelled = try asicfs(["verify", container, "--warnings=warning"] + nonQSCD)
        assertSuccess(spelled)
        XCTAssertTrue(spelled.stdout.hasSuffix("Result: VALID_WITH_WARNINGS\n"), spelled.stdout)
        assertFailure(try asicfs(["verify", container, "--warnings=maybe"] + settings), status: 2,
                      mentions: ["--warnings takes error, warning or ignore"])
    }

    /// sign (JSON Lines, ending with its result) and extend with --json: the envelope of
    /// docs/json-schema.json on success and on failure.
    func testSignAndExtendWithJSON() throws {
        let container = try unsignedContainer()
        let pass = try passphraseFile(TestPKI.passphrase)
        var result = try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)", "passphrase-file=\(pass)", "--json"] + settings)
        var value = try envelope(result, command: "sign", status: 0)
        XCTAssertEqual(value["event"] as? String, "result")
        XCTAssertEqual(value["container"] as? String, container)
        XCTAssertEqual(value["errors"] as? [String], [], "the reasons of a verdict, as verify gives them")
        XCTAssertEqual(value["signature_file"] as? String, "META-INF/signatures0.xml")
        XCTAssertEqual(value["verdict"] as? String, "VALID")
        XCTAssertEqual(value["signer"] as? String, "JÕEORG,JAAK-KRISTJAN,38001085718")
        result = try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)", "passphrase-file=\(try passphraseFile("nope"))", "--json"] + settings)
        value = try envelope(result, command: "sign", status: 1, code: "signing-failed")
        XCTAssertTrue(((value["error"] as? [String: Any])?["message"] as? String ?? "").contains("wrong passphrase"), "\(value)")
        result = try asicfs(["extend", container, "--json"] + settings)
        value = try envelope(result, command: "extend", status: 0)
        XCTAssertEqual((value["extended"] as? [[String: Any]])?.first?["profile"] as? String, "BES/time-stamp-archive")
    }

    func testCtrlCCancelsASigningAndKeepsTheContainer() throws {
        let silent = try LoopbackProcess.silentServer()
        defer { silent.stop() }
        let container = try unsignedContainer()
        let before = try read(container)
        let (process, stderr) = try startAsicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)",
                                                 "passphrase-file=\(try passphraseFile(TestPKI.passphrase))"] + settings
                                                 + ["-o", "tsa-url=http://127.0.0.1:\(silent.port)/tsa"])
        usleep(1_000_000)  // it reaches the silent time-stamping service and waits there
        XCTAssertTrue(process.isRunning)
        let start = Date()
        process.interrupt()
        process.waitUntilExit()
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
        XCTAssertEqual(process.terminationStatus, 1)
        let message = String(decoding: try Data(contentsOf: stderr), as: UTF8.self)
        XCTAssertTrue(message.contains("cancelled") && message.contains("unchanged"), message)
        XCTAssertEqual(try read(container), before)
    }

    /// `asicfs sign --method mobile-id|smart-id` prints the verification code, waits, exits 0 only on success.
    func testPhoneMethodsPrintTheCodeAndWait() throws {
        let pki = services.pki
        let mid = try MobileIDSimulator.start(pki: pki, folder: Self.folder + "/mobile-id", confirmAfter: 0.3)
        defer { mid.stop() }
        let sid = try SmartIDSimulator.start(pki: pki, folder: Self.folder + "/smart-id", confirmAfter: 0.3)
        defer { sid.stop() }
        let phoneSettings = settings.map { $0.hasPrefix("trust-anchors=") ? "trust-anchors=\(pki.chain)" : $0 } + [
            "-o", "mobile-id.url=\(mid.url)", "-o", "mobile-id.tls-cert=\(mid.tlsCertificate)",
            "-o", "smart-id.url=\(sid.url)", "-o", "smart-id.tls-cert=\(sid.tlsCertificate)"]
        let container = try unsignedContainer()
        let mobile = try asicfs(["sign", container, "--method", "mobile-id", "phone=+37200000766", "idcode=60001019906"] + phoneSettings)
        assertSuccess(mobile)
        let lines = mobile.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, mobile.stdout)
        XCTAssertTrue(lines[0].range(of: #"^verification code: [0-9]{4} \(sign only if your phone shows the same code\)$"#,
                                     options: .regularExpression) != nil, lines[0])
        XCTAssertTrue(lines[1].hasPrefix("signed: O'CONNEŽ-ŠUSLIK TESTNUMBER,MARY ÄNN,60001019906 S0") && lines[1].hasSuffix("VALID"), lines[1])

        let smart = try asicfs(["sign", container, "--method", "smart-id", "country=EE", "idcode=30303039914"] + phoneSettings)
        assertSuccess(smart)
        XCTAssertTrue(smart.stdout.hasPrefix("verification code: "), smart.stdout)
        XCTAssertTrue(smart.stdout.contains(" S1 in META-INF/signatures1.xml, VALID"), smart.stdout)

        // --json: the code is its own line, printed before the signing ends, then the result.
        let json = try asicfs(["sign", container, "--method", "mobile-id", "phone=+37200000766", "idcode=60001019906", "--json"] + phoneSettings)
        let events = try assertValidJSON(json)
        XCTAssertEqual(events.first?["event"] as? String, "verification_code", json.stdout)
        XCTAssertNotNil((events.first?["verification_code"] as? String)?.range(of: #"^[0-9]{4}$"#, options: .regularExpression), json.stdout)
        XCTAssertEqual(events.last?["event"] as? String, "result", json.stdout)
        XCTAssertEqual(try envelope(json, command: "sign", status: 0)["signature_file"] as? String, "META-INF/signatures2.xml")
        XCTAssertFalse(json.stderr.contains("verification code"), json.stderr)

        let before = try read(container)
        let refused = try asicfs(["sign", container, "--method", "smart-id", "country=EE", "idcode=30403039983"]
                                 + phoneSettings + ["-o", "smart-id.timeout=60"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.hasPrefix("asicfs: Smart-ID: "), refused.stderr)
        XCTAssertEqual(try read(container), before)
        let verify = try asicfs(["verify", container] + phoneSettings)
        assertSuccess(verify)
    }

    /// Without passphrase-file= the one secrets module asks: pinentry here (a fake one), three
    /// tries with the reason shown again, and a cancel signs nothing.
    func testThePKCS12PassphraseComesFromPinentry() throws {
        let container = try unsignedContainer()
        let before = try read(container)
        let log = path("pinentry.log")
        let cancelling = path("cancelling-pinentry")
        try FakePinentry.write(to: cancelling, pin: nil, log: log)
        assertFailure(try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)", "-o", "pinentry=\(cancelling)"]
                                 + settings), mentions: ["pkcs12: passphrase entry was cancelled; nothing was signed"])
        XCTAssertEqual(try read(container), before)
        let answering = path("answering-pinentry")
        try FakePinentry.write(to: answering, pin: TestPKI.passphrase, log: log)
        let signed = try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)", "-o", "pinentry=\(answering)"]
                                + settings)
        assertSuccess(signed)
        XCTAssertTrue(signed.stdout.hasSuffix(", VALID\n"), signed.stdout)
        let transcript = try String(contentsOfFile: log, encoding: .utf8)
        XCTAssertTrue(transcript.contains("SETDESC Signing with the PKCS#12 file \(services.pki.signerP12)"), transcript)
        XCTAssertTrue(transcript.contains("SETPROMPT Passphrase for signer.p12:"), transcript)
        XCTAssertFalse(transcript.contains(TestPKI.passphrase), "the passphrase is in no environment or command line")
        let wrong = path("wrong-pinentry")
        try FakePinentry.write(to: wrong, pin: "not it", log: log)
        assertFailure(try asicfs(["sign", container, "--method", "pkcs12", "file=\(services.pki.signerP12)", "-o", "pinentry=\(wrong)"]
                                 + settings), mentions: ["wrong passphrase for signer.p12"])
        XCTAssertTrue(try String(contentsOfFile: log, encoding: .utf8).contains("SETERROR wrong passphrase for signer.p12; try again (1 left)"))
    }

    func testUsageErrorsExitTwo() throws {
        let container = try unsignedContainer()
        assertFailure(try asicfs(["sign", container]), status: 2, mentions: ["missing --method"])
        assertFailure(try asicfs(["sign", container, "--method", "fax"]), status: 2, mentions: ["unknown method 'fax'"])
        assertFailure(try asicfs(["sign", container, "--method", "pkcs12", "colour=red"]), status: 2,
                      mentions: ["pkcs12: unknown parameter 'colour'"])
        assertFailure(try asicfs(["sign", container, "--method", "pkcs12", "passphrase-file=x"]), status: 2,
                      mentions: ["'file=PATH' is required"])
        // On the command line a quote is part of the value (the shell has quoted already).
        assertFailure(try asicfs(["sign", container, "--method", "pkcs12", "file=\"unbalanced", "-o", "pinentry=none"]), status: 2,
                      mentions: ["'passphrase-file=PATH' is required"])
        let help = try asicfs(["sign", "--help"])
        assertSuccess(help)
        for method in ["mobile-id", "smart-id", "id-card", "pkcs11", "pkcs12", "remote"] {
            XCTAssertTrue(help.stdout.contains("  \(method): "), "\(method) missing from: \(help.stdout)")
        }
    }

    /// The verdicts of the reference's container shapes, trust from test lists: an LT signature,
    /// one whose signer's key was substituted, a time-stamped ASiC-S, and no trust at all.
    func testVerifyVerdictsOfTheReferenceShapes() throws {
        let signed = path("signed.asice")
        try FileManager.default.moveItem(atPath: try unsignedContainer(), toPath: signed)
        assertSuccess(try asicfs(["sign", signed, "--method", "pkcs12", "file=\(services.pki.signerP12)",
                                  "passphrase-file=\(try passphraseFile(TestPKI.passphrase))"] + settings))
        let trust = try trustLists().settings(cache: root.path + "/cache-lists")
        let valid = try asicfs(["verify", signed] + trust)
        assertSuccess(valid)
        XCTAssertTrue(valid.stdout.hasSuffix("Result: VALID\n"), valid.stdout)
        let forged = try asicfs(["verify", try keySubstituted(signed)] + trust)
        XCTAssertEqual(forged.status, 1)
        XCTAssertTrue(forged.stdout.contains("Failed to validate signature"), forged.stdout)
        XCTAssertTrue(forged.stdout.hasSuffix("Result: INVALID\n"), forged.stdout)
        let asics = try timeStampedASiCS()
        let timestamped = try asicfs(["verify", asics.path] + trust)
        assertSuccess(timestamped)
        XCTAssertTrue(timestamped.stdout.contains("time-stamp       \(asics.time)"), asics.time + "\n" + timestamped.stdout)
        let untrusted = try asicfs(["verify", signed, "-o", "tsl=none"])
        XCTAssertEqual(untrusted.status, 1)
        XCTAssertTrue(untrusted.stdout.hasSuffix("Result: INDETERMINATE\n"), untrusted.stdout)
        let unsigned = try asicfs(["verify", try unsignedContainer(), "-o", "tsl=none"])
        XCTAssertEqual(unsigned.status, 1)
        XCTAssertTrue(unsigned.stdout.contains("no signatures"), unsigned.stdout)
        assertFailure(try asicfs(["verify", path("missing.asice")]), mentions: ["missing.asice"])
        assertFailure(try asicfs(["verify", signed, asics.path]), status: 2,
                      mentions: ["verify takes one CONTAINER"])
    }
}

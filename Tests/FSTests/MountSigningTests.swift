import Foundation
import TestTools
import XCTest

/// Signing through `.asicfs/sign/`, `status/wait`, validation in `signatures/`, and removing a
/// signature by writing `remove` to its folder's file: real mounts, the PKCS#12 signer, the loopback TSA and OCSP services
/// of a fresh test PKI whose root is the only trust anchor.
final class MountSigningTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    static var services: TestServices? { shared.services }
    static var folder: String { shared.folder }

    override class func setUp() { shared = SharedTestServices(label: "fs-signing") }
    override class func tearDown() { shared.stop() }

    var services: TestServices {
        get throws { try XCTUnwrap(Self.services, "the loopback TSA/OCSP services and the test PKI") }
    }

    static let signerFolder = "0-JÕEORG,JAAK-KRISTJAN,38001085718"

    /// A container made by `asicfs create` with these files, mounted with the test PKI's settings.
    func mountedContainer(_ files: [String: String], tsa: String? = nil) throws -> MountFixture {
        let fixture = try MountFixture(self)
        var paths: [String] = []
        for (name, text) in files.sorted(by: { $0.key < $1.key }) {
            try writeFile(Array(text.utf8), fixture.folder + "/" + name)
            paths.append(fixture.folder + "/" + name)
        }
        let created = try Shell.run(MountFixture.binary, ["create", fixture.container] + paths)
        XCTAssertEqual(created.status, 0, created.stderr)
        try fixture.mount(try settings(tsa: tsa))
        return fixture
    }

    func settings(tsa: String? = nil) throws -> [String] {
        let services = try services
        return ["tsl=none", "trust-anchors=\(services.pki.root)", "tsa-url=\(tsa ?? services.tsaURL)",
                "cache-dir=\(Self.folder)/cache"]
    }

    func passphraseFile(_ text: String = TestPKI.passphrase) throws -> String {
        let path = Self.folder + "/pass-\(UUID().uuidString.prefix(6))"
        try writeFile(Array((text + "\n").utf8), path)
        return path
    }

    /// The request line for the PKCS#12 signer.
    func pkcs12Request(_ p12: String? = nil, passphrase: String = TestPKI.passphrase) throws -> String {
        "file=\(try p12 ?? services.pki.signerP12) passphrase-file=\(try passphraseFile(passphrase))"
    }

    /// bash, whose error for a failed `echo` names the errno ("write error: Invalid argument").
    @discardableResult
    func bash(_ script: String) throws -> Shell.Output { try Shell.run("/bin/bash", ["-c", script]) }

    func request(_ fixture: MountFixture, _ method: String, _ text: String) throws -> Shell.Output {
        try bash("echo '\(text)' > '\(fixture.path(".asicfs/sign/" + method))'")
    }

    func waitForSigning(_ fixture: MountFixture) throws -> Shell.Output {
        try Shell.run("/bin/cat", [fixture.path(".asicfs/status/wait")])
    }

    func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    func sha256(_ path: String) throws -> String {
        let result = try Shell.run("sha256sum", [path])
        XCTAssertEqual(result.status, 0, result.stderr)
        return String(result.stdout.prefix(64))
    }

    func zipNames(_ path: String) throws -> [String] {
        let result = try Shell.python("import zipfile, sys; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))", [path])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    // MARK: - Signing

    /// A control-file request is one line: values with spaces in "double" or 'single' quotes
    /// (the other kind inside), `role=` repeated, each a ClaimedRole.
    func testQuotedValuesAndRepeatedRolesInARequest() throws {
        let fixture = try mountedContainer(["a.txt": "alpha\n"])
        let line = "\(try pkcs12Request()) role=\"O'Brien's deputy\" role='Board member' city=\"Tartu linn\"\n"
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: fixture.path(".asicfs/sign/pkcs12")))
        try handle.write(contentsOf: Data(line.utf8))
        try handle.close()
        let wait = try waitForSigning(fixture)
        XCTAssertEqual(wait.status, 0, wait.stderr)
        let report = try validatedText(fixture.path(".asicfs/signatures/\(Self.signerFolder)/report"))
        XCTAssertTrue(report.contains("roles            O'Brien's deputy, Board member\n"), report)
        XCTAssertTrue(report.contains("Tartu linn"), report)
        try fixture.unmount()
    }

    /// A signed container whose large data file is damaged mid-stream: reading the signature's
    /// status says INVALID and names the file (it killed the daemon: SIGILL in the streaming
    /// read), and the mount goes on serving.
    func testTheStatusOfASignatureOverDamagedDataIsInvalidAndTheMountLives() throws {
        let fixture = try MountFixture(self)
        let big = fixture.folder + "/big.txt"
        try writeFile(textLikeBytes(count: 6 << 20), big)
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, big]).status, 0)
        let signed = try Shell.run(MountFixture.binary, ["sign", fixture.container, "--method", "pkcs12",
                                                         "file=\(try services.pki.signerP12)",
                                                         "passphrase-file=\(try passphraseFile())"]
                                   + (try settings()).flatMap { ["-o", $0] })
        XCTAssertEqual(signed.status, 0, signed.stderr)
        try DamagedContainer.corruptStream(of: "big.txt", in: fixture.container)
        try fixture.mount(try settings())
        let status = try validatedText(fixture.path(".asicfs/signatures/\(Self.signerFolder)/status"))
        XCTAssertEqual(status.split(separator: "\n").first, "INVALID", status)
        XCTAssertTrue(status.contains("big.txt"), status)
        XCTAssertTrue(fixture.isMounted)
        XCTAssertTrue(try text(fixture.path(".asicfs/container")).contains("state: signed"))
        try fixture.unmount()
    }

    func testSigningWithPKCS12ThenRemovingTheSignatureOnlyByRequest() throws {
        let fixture = try mountedContainer(["a.txt": "first\n"])
        let m = fixture.mountpoint
        // Written just before the request: committed first, so the signature covers it.
        try writeFile(Array("second\n".utf8), m + "/b.txt")
        // A file still open for writing cannot be committed: the request is refused.
        let open = try bash("exec 3> '\(m)/open.txt'; echo open >&3; echo '\(try pkcs12Request())' > '\(m)/.asicfs/sign/pkcs12'")
        XCTAssertTrue(open.stderr.contains("write error: Device or resource busy"), open.stderr)
        XCTAssertEqual(try text(m + "/.asicfs/status/last-error"),
                       "cannot sign: 'open.txt' is still open for writing; close it first, so that the signature covers its final content\n")

        let started = try request(fixture, "pkcs12", try pkcs12Request())
        XCTAssertEqual(started.status, 0, started.stderr)
        let wait = try waitForSigning(fixture)
        XCTAssertEqual(wait.status, 0, wait.stderr)
        XCTAssertTrue(wait.stdout.hasPrefix("done: signed: JÕEORG,JAAK-KRISTJAN,38001085718 S0 in META-INF/signatures0.xml, VALID"),
                      wait.stdout)
        XCTAssertEqual(wait.stdout.filter { $0 == "\n" }.count, 1, wait.stdout)
        XCTAssertEqual(try text(m + "/.asicfs/status/current"), wait.stdout)

        // The signature folder, validated by the mount.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures"), [Self.signerFolder])
        let folder = m + "/.asicfs/signatures/" + Self.signerFolder
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).sorted(),
                       ["certificate.pem", "method", "remove", "report", "signature.xml", "signer", "signing-time", "status"])
        let status = try validatedText(folder + "/status")
        XCTAssertEqual(status.split(separator: "\n").first, "VALID", status)
        let report = try validatedText(folder + "/report")
        XCTAssertTrue(report.hasPrefix("Signature 0 (S0, META-INF/signatures0.xml): VALID\n"), report)
        XCTAssertTrue(report.contains("signer           JÕEORG,JAAK-KRISTJAN,38001085718\n"), report)
        XCTAssertTrue(report.contains("signed files     a.txt, b.txt, open.txt\n"), report)
        XCTAssertTrue(report.contains("time-stamp by    TEST of asicfs TSA 2025\n"), report)
        XCTAssertEqual(try text(folder + "/method"), "pkcs12\n")
        XCTAssertTrue(try text(m + "/.asicfs/container").contains("signatures: 1\nstate: signed"))

        // On disk: a real signature file in a container that unzip and zipfile accept.
        XCTAssertEqual(try zipNames(fixture.container),
                       ["mimetype", "a.txt", "b.txt", "open.txt", "META-INF/manifest.xml", "META-INF/signatures0.xml"])
        let unzip = try Shell.run("unzip", ["-t", fixture.container])
        XCTAssertEqual(unzip.status, 0, unzip.stdout + unzip.stderr)
        XCTAssertEqual(try containerContents(fixture.container),
                       ["a.txt": Array("first\n".utf8), "b.txt": Array("second\n".utf8), "open.txt": Array("open\n".utf8)])
        let onDisk = try Shell.sh("unzip -p '\(fixture.container)' META-INF/signatures0.xml | sha256sum")
        XCTAssertEqual(onDisk.stdout.prefix(64), try sha256(folder + "/signature.xml").prefix(64))

        // Signed: the data files cannot change.
        for command in ["echo more >> '\(m)/a.txt'", "echo new > '\(m)/c.txt'", "rm '\(m)/b.txt'"] {
            let refused = try bash(command)
            XCTAssertNotEqual(refused.status, 0, command)
            XCTAssertTrue(refused.stderr.contains("Operation not permitted"), refused.stderr)
        }
        XCTAssertTrue(try text(m + "/.asicfs/status/last-error").contains("the container is signed"))

        // Unlinking and rmdir in .asicfs change nothing, however they come (rm -rf of the
        // control folder, of a signature's folder, rmdir): a signature cannot be made again.
        let signedBytes = try sha256(fixture.container)
        for command in ["rm -rf '\(m)/.asicfs'", "rm -rf '\(folder)'", "rmdir '\(folder)'", "rm -f '\(folder)/signature.xml'"] {
            let refused = try bash(command)
            XCTAssertNotEqual(refused.status, 0, command)
            XCTAssertTrue(refused.stderr.contains("Operation not permitted"), command + ": " + refused.stderr)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures"), [Self.signerFolder])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).count, 8)
        XCTAssertTrue(try text(m + "/.asicfs/status/last-error").contains("nothing in .asicfs can be removed"))
        XCTAssertEqual(try sha256(fixture.container), signedBytes)
        // Only the explicit request removes it: a write of anything else is refused (EINVAL).
        XCTAssertTrue(try text(folder + "/remove").hasPrefix("write 'remove' to this file to remove this signature"))
        let unclear = try bash("echo yes > '\(folder)/remove'")
        XCTAssertTrue(unclear.stderr.contains("write error: Invalid argument"), unclear.stderr)
        XCTAssertEqual(try sha256(fixture.container), signedBytes)
        // `remove` removes the signature and frees the data files.
        let removed = try bash("echo remove > '\(folder)/remove'")
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures"), [])
        XCTAssertEqual(try zipNames(fixture.container), ["mimetype", "a.txt", "b.txt", "open.txt", "META-INF/manifest.xml"])
        XCTAssertTrue(try text(m + "/.asicfs/container").contains("signatures: 0\nstate: unsigned"))
        let added = try bash("echo third > '\(m)/c.txt'")
        XCTAssertEqual(added.status, 0, added.stderr)
        try fixture.unmount()
        XCTAssertEqual(try containerContents(fixture.container).keys.sorted(), ["a.txt", "b.txt", "c.txt", "open.txt"])
        XCTAssertEqual(try Shell.run("unzip", ["-t", fixture.container]).status, 0)
    }

    /// Files copied in are hashed while the mount saves them, and the signing uses those
    /// digests: a fresh `asicfs verify`, which reads every byte back, must agree.
    func testSigningRightAfterACopyInVerifiesInAFreshProcess() throws {
        let fixture = try mountedContainer(["a.txt": "first\n"])
        let m = fixture.mountpoint
        let text = textLikeBytes(count: 6 << 20)
        try writeFile(text, fixture.folder + "/log.txt")
        let copied = try bash("""
            set -e
            cp '\(fixture.folder)/log.txt' '\(m)/log.txt'
            head -c 5000000 /dev/urandom > '\(m)/noise.bin'
            sync '\(m)/noise.bin'
            """)
        XCTAssertEqual(copied.status, 0, copied.stderr)
        let started = try request(fixture, "pkcs12", try pkcs12Request())
        XCTAssertEqual(started.status, 0, started.stderr)
        let wait = try waitForSigning(fixture)
        XCTAssertTrue(wait.stdout.contains(", VALID"), wait.stdout)
        try fixture.unmount()

        let verify = try Shell.run(MountFixture.binary, ["verify", fixture.container] + (try settings()).flatMap { ["-o", $0] })
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
        XCTAssertTrue(verify.stdout.contains("signed files     a.txt, log.txt, noise.bin\n"), verify.stdout)
        XCTAssertTrue(verify.stdout.hasSuffix("Result: VALID\n"), verify.stdout)
        XCTAssertEqual(try containerContents(fixture.container)["log.txt"], text)
    }

    func testBadRequestsFailTheWriteWithEINVALAndSayWhy() throws {
        let fixture = try mountedContainer(["a.txt": "a\n"])
        let m = fixture.mountpoint
        let before = try sha256(fixture.container)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs").sorted(),
                       ["README", "container", "sign", "signatures", "status"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/sign").sorted(),
                       ["id-card", "mobile-id", "pkcs11", "pkcs12", "remote", "smart-id"])
        let usage = try text(m + "/.asicfs/sign/pkcs12")
        XCTAssertTrue(usage.hasPrefix("pkcs12: file=PATH [passphrase-file=PATH]\nexample: echo "), usage)
        // A mount refuses pin-fd= (below), so its control files do not offer it and say who asks instead.
        let idCard = try text(m + "/.asicfs/sign/id-card")
        XCTAssertTrue(idCard.hasPrefix("id-card: [reader=NAME] [can=DIGITS]\nPIN2: pinentry asks (setting pinentry), else the reader's PIN pad; pin-fd=N works on the command line only\n"), idCard)
        // The README's remote entry once ended in a dangling "status/last-error says so)" line.
        let readme = try text(m + "/.asicfs/README")
        XCTAssertFalse(readme.contains("pinentry\n                     status/last-error says so)"), readme)
        XCTAssertTrue(readme.contains("(pin-fd=N is for the command line only: a mount\n"), readme)
        for method in ["id-card", "pkcs11", "remote"] {
            XCTAssertFalse(try text(m + "/.asicfs/sign/" + method).contains("[pin-fd=N]"), method)
        }
        XCTAssertTrue(try text(m + "/.asicfs/sign/mobile-id").hasPrefix("mobile-id: phone=+372"))

        let p12 = try services.pki.signerP12
        let cases: [(method: String, request: String, reason: String)] = [
            ("pkcs12", "file=\(p12) colour=blue", "pkcs12: unknown parameter 'colour'"),
            ("pkcs12", "passphrase-file=\(try passphraseFile())", "pkcs12: 'file=PATH' is required"),
            ("pkcs12", "file=\"\(p12)", "unbalanced quote"),
            ("remote", "credential=", "remote: credential= takes a credential ID"),
            ("id-card", "pin-fd=0", "id-card: pin-fd= is for the command line"),
            ("id-card", "can=12a", "id-card: can= takes the card access number"),
            ("mobile-id", "phone=+37200000766 idcode=60001019907", "mobile-id: "),
            ("smart-id", "country=XX idcode=30303039914", "smart-id: "),
        ]
        for (method, request, reason) in cases {
            let refused = try self.request(fixture, method, request)
            XCTAssertNotEqual(refused.status, 0, request)
            XCTAssertTrue(refused.stderr.contains("write error: Invalid argument"), "\(request): \(refused.stderr)")
            let lastError = try text(m + "/.asicfs/status/last-error")
            XCTAssertTrue(lastError.hasPrefix(reason), "\(request): \(lastError)")
        }
        // A refused request is no signing.
        let wait = try waitForSigning(fixture)
        XCTAssertEqual(wait.status, 0, wait.stderr)
        XCTAssertEqual(wait.stdout, "idle: no signing has run\n")
        XCTAssertEqual(try text(m + "/.asicfs/status/current"), "idle\n")
        XCTAssertEqual(try text(m + "/.asicfs/status/mobile-id"), "idle\nno verification code\n")
        XCTAssertTrue(try text(m + "/.asicfs/status/id-card").hasPrefix("idle\n"))
        // Only the sign/ files take writes.
        for path in ["status/current", "status/wait", "README"] {
            XCTAssertNotEqual(try bash("echo x > '\(m)/.asicfs/\(path)'").status, 0, path)
        }
        try fixture.unmount()
        XCTAssertEqual(try sha256(fixture.container), before)
    }

    /// A signing that fails says why in status/wait (and cat exits non-zero), status/current and
    /// last-error, and leaves the container byte for byte as it was.
    func testFailedSigningsAreReportedAndLeaveTheContainerUnchanged() throws {
        let fixture = try mountedContainer(["a.txt": "a\n"])
        let m = fixture.mountpoint
        let before = try sha256(fixture.container)

        // A PKCS#12 file that is not there: the write succeeds (the parameters are well formed),
        // the signing fails at once.
        let missing = Self.folder + "/missing-\(UUID().uuidString.prefix(6)).p12"
        let written = try request(fixture, "pkcs12", try pkcs12Request(missing))
        XCTAssertEqual(written.status, 0, written.stderr)
        var wait = try waitForSigning(fixture)
        XCTAssertEqual(wait.stdout, "failed: cannot read the PKCS#12 file \(missing)\n")
        XCTAssertNotEqual(wait.status, 0)

        XCTAssertEqual(try request(fixture, "pkcs12", try pkcs12Request(passphrase: "not the passphrase")).status, 0)
        wait = try waitForSigning(fixture)
        XCTAssertEqual(wait.stdout, "failed: wrong passphrase for signer.p12\n")
        XCTAssertNotEqual(wait.status, 0)
        XCTAssertTrue(wait.stderr.contains("Input/output error"), wait.stderr)
        XCTAssertEqual(try text(m + "/.asicfs/status/current"), wait.stdout)
        XCTAssertEqual(try text(m + "/.asicfs/status/last-error"), "signing with pkcs12 failed: wrong passphrase for signer.p12\n")
        // Every later read of status/wait reports the same failure, until the next signing.
        XCTAssertNotEqual(try waitForSigning(fixture).status, 0)

        XCTAssertEqual(try request(fixture, "pkcs12", try pkcs12Request(try services.pki.revokedP12)).status, 0)
        wait = try waitForSigning(fixture)
        XCTAssertTrue(wait.stdout.hasPrefix("failed: the certificate of TÜHISTATUD,TEST,39912319997 is revoked"), wait.stdout)
        XCTAssertNotEqual(wait.status, 0)

        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures"), [])
        XCTAssertEqual(try sha256(fixture.container), before)
        // Still unsigned: data files can change.
        XCTAssertEqual(try bash("echo b > '\(m)/b.txt'").status, 0)
        try fixture.unmount()
        XCTAssertEqual(try containerContents(fixture.container).keys.sorted(), ["a.txt", "b.txt"])

        // No time-stamping service.
        let unreachable = try mountedContainer(["a.txt": "a\n"], tsa: "http://127.0.0.1:1/tsa")
        let unreachableBefore = try sha256(unreachable.container)
        XCTAssertEqual(try request(unreachable, "pkcs12", try pkcs12Request()).status, 0)
        wait = try waitForSigning(unreachable)
        XCTAssertTrue(wait.stdout.hasPrefix("failed: time-stamp: could not connect to 127.0.0.1"), wait.stdout)
        XCTAssertNotEqual(wait.status, 0)
        try unreachable.unmount()
        XCTAssertEqual(try sha256(unreachable.container), unreachableBefore)
    }

    /// One signing at a time; a reader of status/wait blocks only itself, and neither Ctrl-C nor
    /// stopping the mount waits for a signing that does not end.
    func testASecondRequestIsBusyAndWaitingBlocksOnlyTheReader() throws {
        // A time-stamping service that accepts connections and never answers.
        let silent = try LoopbackProcess.silentServer()
        defer { silent.stop() }
        let tsa = "http://127.0.0.1:\(silent.port)/tsa"
        let fixture = try mountedContainer(["a.txt": "a\n"], tsa: tsa)
        let m = fixture.mountpoint
        let before = try sha256(fixture.container)

        XCTAssertEqual(try request(fixture, "pkcs12", try pkcs12Request()).status, 0)
        let second = try request(fixture, "pkcs12", try pkcs12Request())
        XCTAssertNotEqual(second.status, 0)
        XCTAssertTrue(second.stderr.contains("write error: Device or resource busy"), second.stderr)
        XCTAssertTrue(try text(m + "/.asicfs/status/last-error").hasPrefix("cannot start a pkcs12 signing: a pkcs12 signing is already "))

        // Two readers wait; everything else goes on meanwhile.
        let output = Self.folder + "/wait-\(UUID().uuidString.prefix(6))"
        let waiter = try Shell.spawn("/bin/cat", [m + "/.asicfs/status/wait"], stdout: output + ".out", stderr: output + ".err")
        let interrupted = try Shell.spawn("/bin/cat", [m + "/.asicfs/status/wait"], stdout: "/dev/null", stderr: "/dev/null")
        usleep(300_000)
        var status: Int32 = 0
        XCTAssertEqual(waitpid(waiter, &status, WNOHANG), 0, "status/wait returned while the signing runs")
        // The signing reaches the silent service within moments (and stays there for its 20 s timeout).
        var current = ""
        for _ in 0..<50 {
            current = try text(m + "/.asicfs/status/current")
            if current.contains("time-stamping") { break }
            usleep(100_000)
        }
        XCTAssertEqual(current, "signing: time-stamping at \(tsa)\n")
        XCTAssertEqual(try readFile(m + "/a.txt"), Array("a\n".utf8))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m).sorted(), [".asicfs", "a.txt"])
        let change = try bash("echo b > '\(m)/b.txt'")
        XCTAssertTrue(change.stderr.contains("Device or resource busy"), change.stderr)
        XCTAssertTrue(try text(m + "/.asicfs/status/last-error").contains("a pkcs12 signing is running"))

        // Ctrl-C ends a wait at once.
        var start = Date()
        kill(interrupted, SIGINT)
        XCTAssertEqual(Shell.wait(interrupted), 128 + SIGINT)
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)

        // fusermount3 -u finds the mount busy (asicfs umount would cancel the signing: see
        // MountPhoneSigningTests); stopping the daemon ends the wait (EIO), cancels the signing
        // and writes nothing.
        XCTAssertTrue(try Shell.run("fusermount3", ["-u", m]).stderr.contains("Device or resource busy"))
        start = Date()
        XCTAssertEqual(fixture.signal(SIGTERM), 0)
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
        XCTAssertNotEqual(Shell.wait(waiter), 0)
        XCTAssertEqual(try text(output + ".out"), "")
        let waiterError = try text(output + ".err")
        XCTAssertTrue(waiterError.contains("Input/output error"), waiterError)
        XCTAssertFalse(fixture.isMounted)
        XCTAssertEqual(try sha256(fixture.container), before)
    }

    /// `echo cancel > .asicfs/sign/<method>` stops a running signing of that method; the wait reports it.
    func testCancellingARunningSigning() throws {
        let silent = try LoopbackProcess.silentServer()
        defer { silent.stop() }
        let fixture = try mountedContainer(["a.txt": "a\n"], tsa: "http://127.0.0.1:\(silent.port)/tsa")
        let m = fixture.mountpoint
        let before = try sha256(fixture.container)

        let early = try request(fixture, "pkcs12", "cancel")
        XCTAssertTrue(early.stderr.contains("Invalid argument"), early.stderr)
        XCTAssertEqual(try text(m + "/.asicfs/status/last-error"), "cancel: no pkcs12 signing is running\n")

        XCTAssertEqual(try request(fixture, "pkcs12", try pkcs12Request()).status, 0)
        for _ in 0..<50 where !(try text(m + "/.asicfs/status/current")).contains("time-stamping") { usleep(100_000) }
        let start = Date()
        let cancelled = try request(fixture, "pkcs12", "cancel")
        XCTAssertEqual(cancelled.status, 0, cancelled.stderr)
        let wait = try waitForSigning(fixture)
        XCTAssertLessThan(Date().timeIntervalSince(start), 5, "a cancel ends the network wait within seconds")
        XCTAssertTrue(wait.stdout.hasPrefix("failed: ") && wait.stdout.contains("cancelled"), wait.stdout)
        XCTAssertNotEqual(wait.status, 0)
        XCTAssertEqual(try sha256(fixture.container), before)
        XCTAssertEqual(try bash("echo b > '\(m)/b.txt'").status, 0, "the container is editable again")
        try fixture.unmount()
    }

    /// asicfs removes whole signature files: one holding two signatures is refused (EPERM).
    func testASignatureFileHoldingTwoSignaturesIsNotSplit() throws {
        let fixture = try mountedContainer(["a.txt": "a\n"])
        XCTAssertEqual(try request(fixture, "pkcs12", try pkcs12Request()).status, 0)
        XCTAssertEqual(try waitForSigning(fixture).status, 0)
        try fixture.unmount()
        // The same ds:Signature twice in META-INF/signatures0.xml (the second with other Ids).
        let doubled = try Shell.python("""
            import sys, zipfile
            path = sys.argv[1]
            source = zipfile.ZipFile(path)
            entries = [(info, source.read(info.filename)) for info in source.infolist()]
            source.close()
            with zipfile.ZipFile(path, 'w') as target:
                for info, data in entries:
                    if info.filename == 'META-INF/signatures0.xml':
                        xml = data.decode()
                        start = xml.index('<ds:Signature ')
                        end = xml.index('</ds:Signature>') + len('</ds:Signature>')
                        data = (xml[:end] + xml[start:end].replace('"S0', '"S1') + xml[end:]).encode()
                    target.writestr(info, data)
            """, [fixture.container])
        XCTAssertEqual(doubled.status, 0, doubled.stderr)
        let before = try sha256(fixture.container)
        try fixture.mount(try settings())
        let m = fixture.mountpoint
        let signatures = m + "/.asicfs/signatures"
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: signatures).sorted(),
                       [Self.signerFolder, "1-JÕEORG,JAAK-KRISTJAN,38001085718"])
        let refused = try bash("echo remove > '\(signatures)/\(Self.signerFolder)/remove'")
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("write error: Operation not permitted"), refused.stderr)
        XCTAssertTrue(try text(m + "/.asicfs/status/last-error").contains("META-INF/signatures0.xml holds 2 signatures"))
        // Nothing was removed.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: signatures + "/" + Self.signerFolder).count, 8)
        try fixture.unmount()
        XCTAssertEqual(try sha256(fixture.container), before)
    }
}

import Foundation
import TestTools
import XCTest

/// Mobile-ID and Smart-ID through a real mount: the request written to `.asicfs/sign/…`, the
/// verification code in `status/<method>` (and a desktop notification) before the user confirms,
/// `status/wait`, one signing at a time, cancelling. The simulators run over pinned HTTPS on
/// loopback and sign with keys the test PKI certified; the TSA and OCSP are the loopback ones.
final class MountPhoneSigningTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    nonisolated(unsafe) static var mobileID: MobileIDSimulator?
    nonisolated(unsafe) static var smartID: SmartIDSimulator?

    override class func setUp() {
        shared = SharedTestServices(label: "fs-phone-signing")
        guard let pki = shared.services?.pki else { return }
        // The simulated user confirms after 1.5 s: long enough to read the code and to collide.
        mobileID = try? MobileIDSimulator.start(pki: pki, folder: shared.folder + "/mobile-id", confirmAfter: 1.5,
                                                userTimeout: 5)
        smartID = try? SmartIDSimulator.start(pki: pki, folder: shared.folder + "/smart-id", confirmAfter: 1.5)
    }

    override class func tearDown() {
        mobileID?.stop()
        smartID?.stop()
        shared.stop()
    }

    var services: TestServices { get throws { try XCTUnwrap(Self.shared.services, Self.shared.failure ?? "services") } }

    /// `tsa`, `mobileIDURL`: other services than the loopback TSA and the simulator.
    func settings(tsa: String? = nil, mobileIDURL: String? = nil) throws -> [String] {
        let mid = try XCTUnwrap(Self.mobileID, "the Mobile-ID simulator")
        let sid = try XCTUnwrap(Self.smartID, "the Smart-ID simulator")
        // The services send no chain: the issuing CA comes from the anchors (in real use, the trusted list).
        return ["tsa-url=\(try tsa ?? services.tsaURL)", "tsl=none", "trust-anchors=\(try services.pki.chain)",
                "mobile-id.url=\(mobileIDURL ?? mid.url)", "mobile-id.tls-cert=\(mid.tlsCertificate)",
                "smart-id.url=\(sid.url)", "smart-id.tls-cert=\(sid.tlsCertificate)"]
    }

    func mounted(tsa: String? = nil, mobileIDURL: String? = nil) throws -> MountFixture {
        let fixture = try MountFixture(self)
        try writeFile(Array("the contract\n".utf8), fixture.folder + "/contract.txt")
        let created = try Shell.run(MountFixture.binary, ["create", fixture.container, fixture.folder + "/contract.txt"])
        XCTAssertEqual(created.status, 0, created.stderr)
        try fixture.mount(try settings(tsa: tsa, mobileIDURL: mobileIDURL))
        return fixture
    }

    func write(_ fixture: MountFixture, _ method: String, _ text: String) throws -> Shell.Output {
        try Shell.run("/bin/bash", ["-c", "echo '\(text)' > '\(fixture.path(".asicfs/sign/" + method))'"])
    }

    /// Foundation opens with O_NONBLOCK, so this never waits for a verification code (cat does).
    func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// Polls `status/<method>` until the user is asked to confirm; returns the whole text.
    func codeShown(_ fixture: MountFixture, _ method: String) throws -> String {
        var status = ""
        for _ in 0..<100 {
            status = try text(fixture.path(".asicfs/status/" + method))
            // The code is shown first; the state says waiting-for-user once the request went out.
            if status.hasPrefix("waiting-for-user: ") && status.contains("verification code: ") { break }
            usleep(50_000)
        }
        return status
    }

    func code(in status: String) -> String? {
        status.split(separator: "\n").first { $0.hasPrefix("verification code: ") }.map { String($0.dropFirst(19)) }
    }

    func testMobileIDInAMountShowsTheCodeThenSigns() throws {
        // A desktop session with a notify-send that records what it was asked to show.
        let desktop = try RecordingNotifySend(in: Self.shared.folder)
        defer { desktop.restore() }
        let notified = desktop.notified
        let fixture = try mounted()
        let m = fixture.mountpoint

        let started = try write(fixture, "mobile-id", "phone=+37200000766 idcode=60001019906 role=Buyer")
        XCTAssertEqual(started.status, 0, started.stderr)
        let status = try codeShown(fixture, "mobile-id")
        let shown = try XCTUnwrap(code(in: status), status)
        XCTAssertEqual(shown.count, 4)
        XCTAssertTrue(status.hasPrefix("waiting-for-user: confirm on the phone +37200000766"), status)
        XCTAssertTrue(try text(m + "/.asicfs/status/current").hasPrefix("waiting-for-user: "))

        // One signing at a time, whatever the method.
        let second = try write(fixture, "smart-id", "country=EE idcode=30303039914")
        XCTAssertTrue(second.stderr.contains("Device or resource busy"), second.stderr)

        let wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertEqual(wait.status, 0, wait.stderr)
        XCTAssertTrue(wait.stdout.hasPrefix("done: signed: O'CONNEŽ-ŠUSLIK TESTNUMBER,MARY ÄNN,60001019906 S0"), wait.stdout)
        XCTAssertTrue(wait.stdout.hasSuffix(", VALID\n"), wait.stdout)
        XCTAssertEqual(try text(m + "/.asicfs/status/mobile-id"), wait.stdout + "no verification code\n")
        let folder = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures").first)
        XCTAssertEqual(try text(m + "/.asicfs/signatures/\(folder)/method"), "mobile-id\n")
        XCTAssertTrue(try validatedText(m + "/.asicfs/signatures/\(folder)/status").hasPrefix("VALID\n"))
        XCTAssertTrue(try validatedText(m + "/.asicfs/signatures/\(folder)/report").contains("roles            Buyer"))

        let notification = try text(notified)
        XCTAssertTrue(notification.contains("asicfs: Mobile-ID verification code \(shown)"), notification)
        try fixture.unmount()
    }

    func testSmartIDInAMountWithTheConfirmationScreen() throws {
        let fixture = try mounted()
        let m = fixture.mountpoint
        XCTAssertEqual(try write(fixture, "smart-id", "country=EE idcode=30303039914 display=confirmation").status, 0)
        let status = try codeShown(fixture, "smart-id")
        XCTAssertNotNil(code(in: status), status)
        let wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertEqual(wait.status, 0, wait.stderr)
        XCTAssertTrue(wait.stdout.hasPrefix("done: signed: ") && wait.stdout.hasSuffix(", VALID\n"), wait.stdout)
        let folder = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures").first)
        XCTAssertEqual(try text(m + "/.asicfs/signatures/\(folder)/method"), "smart-id\n")
        try fixture.unmount()
    }

    func testRefusalsAndCancellingLeaveTheContainerUnchanged() throws {
        let fixture = try mounted()
        let m = fixture.mountpoint
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.container))

        // The user cancels on the phone.
        XCTAssertEqual(try write(fixture, "mobile-id", "phone=+37201100266 idcode=60001019950").status, 0)
        var wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertNotEqual(wait.status, 0)
        XCTAssertEqual(wait.stdout, "failed: Mobile-ID: signing was cancelled on the phone\n")
        XCTAssertEqual(try text(m + "/.asicfs/status/last-error"),
                       "signing with mobile-id failed: Mobile-ID: signing was cancelled on the phone\n")

        // Smart-ID: the user refuses in the app.
        XCTAssertEqual(try write(fixture, "smart-id", "country=EE idcode=30403039917").status, 0)
        wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertNotEqual(wait.status, 0)
        XCTAssertTrue(wait.stdout.hasPrefix("failed: Smart-ID: "), wait.stdout)

        // Cancelled from the mount while the code is shown.
        XCTAssertEqual(try write(fixture, "mobile-id", "phone=+37200000766 idcode=60001019906").status, 0)
        XCTAssertNotNil(code(in: try codeShown(fixture, "mobile-id")))
        XCTAssertEqual(try write(fixture, "mobile-id", "cancel").status, 0)
        wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertEqual(wait.stdout, "failed: the signing was cancelled; the container is unchanged\n")

        // Bad input never reaches the service: EINVAL and the reason.
        let refused = try write(fixture, "mobile-id", "phone=+37200000766 idcode=60001019907")
        XCTAssertTrue(refused.stderr.contains("Invalid argument"), refused.stderr)
        XCTAssertTrue(try text(m + "/.asicfs/status/last-error").hasPrefix("mobile-id: "))

        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures"), [])
        try fixture.unmount()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: fixture.container)), before)
    }
    // MARK: - Reading the code at once, and only while it is needed

    /// interface.md's one-liner: `cat status/<method>` right after the request waits for the code.
    func testTheOneLinerPrintsTheVerificationCode() throws {
        let fixture = try mounted()
        let requests = [("mobile-id", "phone=+37200000766 idcode=60001019906"), ("smart-id", "country=EE idcode=30303039914")]
        for (method, request) in requests {
            let script = "cd '\(fixture.mountpoint)' && echo \"\(request)\" > .asicfs/sign/\(method) && "
                + "cat .asicfs/status/\(method) && cat .asicfs/status/wait"
            let result = try Shell.run("/bin/bash", ["-c", script])
            XCTAssertEqual(result.status, 0, result.stderr)
            let lines = result.stdout.split(separator: "\n").map(String.init)
            XCTAssertEqual(lines.count, 3, result.stdout)
            let shown = try XCTUnwrap(code(in: result.stdout), result.stdout)
            XCTAssertNotNil(shown.wholeMatch(of: /[0-9]{4}/), shown)
            XCTAssertTrue(lines[0].hasPrefix("signing: ") || lines[0].hasPrefix("waiting-for-user: "), lines[0])
            XCTAssertTrue(lines.last!.hasPrefix("done: signed: "), result.stdout)
        }
        try fixture.unmount()
    }

    /// The code is shown until the phone has answered; then the state, and how the signing ended.
    func testTheCodeIsShownOnlyDuringThePhoneStep() throws {
        // A time-stamping service that never answers keeps the signing after the phone step.
        let silent = try LoopbackProcess.silentServer()
        defer { silent.stop() }
        let tsa = "http://127.0.0.1:\(silent.port)/tsa"
        let fixture = try mounted(tsa: tsa)
        let m = fixture.mountpoint
        XCTAssertEqual(try text(m + "/.asicfs/status/mobile-id"), "idle\nno verification code\n")

        XCTAssertEqual(try write(fixture, "mobile-id", "phone=+37200000766 idcode=60001019906").status, 0)
        let first = try Shell.run("/bin/cat", [m + "/.asicfs/status/mobile-id"]).stdout
        let shown = try XCTUnwrap(code(in: first), first)
        XCTAssertTrue(try text(m + "/.asicfs/container").contains(
            "state: unsigned, but a mobile-id signing is running: data files cannot change until it ends\n"))
        var status = ""
        for _ in 0..<100 {
            status = try text(m + "/.asicfs/status/mobile-id")
            if status.hasPrefix("signing: time-stamping") { break }
            usleep(50_000)
        }
        XCTAssertEqual(status, "signing: time-stamping at \(tsa)\nno verification code\n")
        XCTAssertFalse(status.contains(shown))
        XCTAssertEqual(try text(m + "/.asicfs/status/smart-id"), "idle\nno verification code\n")

        XCTAssertEqual(try write(fixture, "mobile-id", "cancel").status, 0)
        let wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertEqual(wait.stdout, "failed: the signing was cancelled; the container is unchanged\n")
        XCTAssertEqual(try text(m + "/.asicfs/status/mobile-id"), wait.stdout + "no verification code\n")
        XCTAssertTrue(try text(m + "/.asicfs/container").contains(
            "state: unsigned: data files can be added, changed, renamed and removed\n"))
        try fixture.unmount()
    }

    /// A read of `status/<method>` that waits for the code ends when the signing fails first, at
    /// once when nothing runs, with EINTR when the reader is interrupted, and not at all with O_NONBLOCK.
    func testWaitingForTheCodeEnds() throws {
        // A Mobile-ID "service" that accepts connections and never answers: no certificate, no code.
        let silent = try LoopbackProcess.silentServer()
        defer { silent.stop() }
        let fixture = try mounted(mobileIDURL: "https://127.0.0.1:\(silent.port)/mid-api")
        let status = fixture.path(".asicfs/status/mobile-id")
        XCTAssertEqual(try write(fixture, "mobile-id", "phone=+37200000766 idcode=60001019906").status, 0)

        // Interrupted by a signal whose handler does not restart the read: EINTR within moments.
        let interrupted = try Shell.python("""
            import ctypes, os, signal, sys, time
            libc = ctypes.CDLL(None, use_errno=True)
            signal.signal(signal.SIGALRM, lambda *_: None)
            signal.siginterrupt(signal.SIGALRM, True)
            fd = os.open(sys.argv[1], os.O_RDONLY)
            start = time.monotonic()
            signal.setitimer(signal.ITIMER_REAL, 0.5)
            buffer = ctypes.create_string_buffer(4096)
            n = libc.read(fd, buffer, 4096)
            print(n, os.strerror(ctypes.get_errno()) if n < 0 else buffer.raw[:n].decode(), round(time.monotonic() - start, 1))
            """, [status])
        XCTAssertEqual(interrupted.status, 0, interrupted.stderr)
        let words = interrupted.stdout.split(separator: " ")
        XCTAssertTrue(interrupted.stdout.hasPrefix("-1 Interrupted system call "), interrupted.stdout)
        XCTAssertLessThan(Double(words.last!.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 99, 2)

        // O_NONBLOCK: the text as it is now.
        let now = try Shell.python("""
            import os, sys
            fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
            print(os.read(fd, 4096).decode(), end="")
            """, [status])
        XCTAssertTrue(now.stdout.hasPrefix("signing: ") && now.stdout.hasSuffix("\nno verification code\n"), now.stdout + now.stderr)

        // A reader waiting when the signing ends (here: cancelled) gets how it ended.
        let output = Self.shared.folder + "/status-\(UUID().uuidString.prefix(6))"
        let reader = try Shell.spawn("/bin/cat", [status], stdout: output, stderr: "/dev/null")
        usleep(300_000)
        var exit: Int32 = 0
        XCTAssertEqual(waitpid(reader, &exit, WNOHANG), 0, "status/mobile-id returned before the code was known")
        XCTAssertEqual(try write(fixture, "mobile-id", "cancel").status, 0)
        XCTAssertEqual(Shell.wait(reader), 0)
        XCTAssertEqual(try text(output), "failed: the signing was cancelled; the container is unchanged\nno verification code\n")

        // Nothing runs: at once.
        let start = Date()
        XCTAssertTrue(try Shell.run("/bin/cat", [status]).stdout.hasPrefix("failed: "))
        XCTAssertLessThan(Date().timeIntervalSince(start), 1)
        try fixture.unmount()
    }

    // MARK: - Unmounting while a signing runs

    /// `asicfs umount` cancels the signing that readers of status/wait wait for, and unmounts.
    func testUmountCancelsTheSigningAReaderWaitsFor() throws {
        let fixture = try mounted()
        let m = fixture.mountpoint
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.container))
        // The phone never answers (the session stays RUNNING).
        let (phone, idcode) = MobileIDSimulator.Number.runsForever
        XCTAssertEqual(try write(fixture, "mobile-id", "phone=\(phone) idcode=\(idcode)").status, 0)
        XCTAssertNotNil(code(in: try Shell.run("/bin/cat", [m + "/.asicfs/status/mobile-id"]).stdout))

        let output = Self.shared.folder + "/wait-\(UUID().uuidString.prefix(6))"
        let waiter = try Shell.spawn("/bin/cat", [m + "/.asicfs/status/wait"], stdout: output + ".out", stderr: output + ".err")
        var waiterExit: Int32?
        defer { if waiterExit == nil { kill(waiter, SIGKILL); _ = Shell.wait(waiter) } }
        usleep(300_000)
        var exit: Int32 = 0
        XCTAssertEqual(waitpid(waiter, &exit, WNOHANG), 0, "status/wait returned while the signing runs")
        // fusermount3 alone finds the mount busy.
        XCTAssertTrue(try Shell.run("fusermount3", ["-u", m]).stderr.contains("Device or resource busy"))

        let start = Date()
        let unmounted = try Shell.run(MountFixture.binary, ["umount", m])
        XCTAssertLessThan(Date().timeIntervalSince(start), 8)
        // (Else the teardown stops the daemon: the signing would wait for the phone for minutes.)
        guard unmounted.status == 0 else { throw MountError("umount failed: \(unmounted.stderr)") }
        XCTAssertFalse(fixture.isMounted)
        waiterExit = Shell.wait(waiter)
        XCTAssertEqual(waiterExit, 1, "cat exits non-zero after a failed: line")
        XCTAssertEqual(try text(output + ".out"), "failed: the signing was cancelled; the container is unchanged\n")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: fixture.container)), before)
        XCTAssertEqual(fixture.reap(), 0)
    }

    /// A shell whose current folder is in the mount keeps it busy: umount names it, cancels nothing.
    func testUmountNamesWhatElseKeepsTheMountBusy() throws {
        let fixture = try mounted()
        let m = fixture.mountpoint
        let (phone, idcode) = MobileIDSimulator.Number.runsForever
        XCTAssertEqual(try write(fixture, "mobile-id", "phone=\(phone) idcode=\(idcode)").status, 0)
        XCTAssertNotNil(code(in: try Shell.run("/bin/cat", [m + "/.asicfs/status/mobile-id"]).stdout))
        let waiter = try Shell.spawn("/bin/cat", [m + "/.asicfs/status/wait"], stdout: "/dev/null", stderr: "/dev/null")
        var waiterExit: Int32?
        defer { if waiterExit == nil { kill(waiter, SIGKILL); _ = Shell.wait(waiter) } }
        let inside = try Shell.spawn("/bin/sh", ["-c", "cd '\(m)' && exec sleep 60"], stdout: "/dev/null", stderr: "/dev/null")
        var insideExit: Int32?
        defer { if insideExit == nil { kill(inside, SIGKILL); _ = Shell.wait(inside) } }
        usleep(300_000)

        let refused = try Shell.run(MountFixture.binary, ["umount", m])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderr, "asicfs: cannot unmount \(m): it is in use: process \(inside) (sleep) has its current "
            + "folder in it; close it or leave the folder, then try again\n")
        XCTAssertTrue(fixture.isMounted)
        XCTAssertTrue(try text(m + "/.asicfs/status/current").hasPrefix("waiting-for-user: "), "the signing goes on")

        kill(inside, SIGKILL)
        insideExit = Shell.wait(inside)
        let unmounted = try Shell.run(MountFixture.binary, ["umount", m])
        guard unmounted.status == 0 else { throw MountError("umount failed: \(unmounted.stderr)") }
        waiterExit = Shell.wait(waiter)
        XCTAssertEqual(waiterExit, 1)
        XCTAssertEqual(fixture.reap(), 0)
    }
}

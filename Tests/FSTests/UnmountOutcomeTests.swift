import TestTools
import XCTest

/// `asicfs umount` says what the final save came to: exit 0 only when the daemon saved. A
/// daemon that dies before or during the save, or one that is stopped, is never passed over in
/// silence (umount exited 0 with nothing saved in 71 of 124 kill cases).
final class UnmountOutcomeTests: XCTestCase {
    private func newMount() throws -> (MountFixture, SaveGate) {
        let fixture = try MountFixture(self)
        try writeFile(Array("alpha\n".utf8), fixture.folder + "/a.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/a.txt"]).status, 0)
        let gate = SaveGate(in: fixture.folder, self)
        try fixture.mount(environment: gate.environment)
        return (fixture, gate)
    }

    private func put(_ text: String, _ path: String) throws {
        XCTAssertEqual(try Shell.run("/bin/sh", ["-c", "printf %s \"$1\" > \"$2\"", "sh", text, path]).status, 0)
    }

    /// Starts `asicfs umount` without waiting for it.
    private func startUnmount(_ fixture: MountFixture) throws -> (pid: pid_t, stderr: String) {
        let stderr = fixture.folder + "/umount.err"
        let pid = try Shell.spawn(MountFixture.binary, ["umount", fixture.mountpoint], stdout: "/dev/null", stderr: stderr)
        return (pid, stderr)
    }

    private func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    private func assertOneLine(_ message: String, mentions words: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(message.filter { $0 == "\n" }.count, 1, "one line: \(message)", file: file, line: line)
        XCTAssertTrue(message.hasPrefix("asicfs: "), message, file: file, line: line)
        for word in words { XCTAssertTrue(message.contains(word), "'\(word)' missing in: \(message)", file: file, line: line) }
    }

    /// Killed while its final save runs (held there by the test hook): umount exits 1 and says
    /// the changes are not in the container.
    func testADaemonKilledDuringTheFinalSaveIsReported() throws {
        let (fixture, gate) = try newMount()
        try gate.hold()
        try put("bravo\n", fixture.path("b.txt"))
        gate.waitForAHeldSave()  // the auto-save; the unmount's own save waits behind it
        let umount = try startUnmount(fixture)
        let deadline = Date().addingTimeInterval(10)
        while fixture.isMounted && Date() < deadline { usleep(10_000) }
        XCTAssertFalse(fixture.isMounted, "the kernel mount is gone; the daemon is saving")
        XCTAssertEqual(fixture.signal(SIGKILL), 128 + SIGKILL)
        XCTAssertEqual(Shell.wait(umount.pid), 1)
        assertOneLine(text(umount.stderr), mentions: ["ended before it had saved", fixture.container, "not in it"])
        XCTAssertEqual(Set(try containerContents(fixture.container).keys), ["a.txt"])
    }

    /// Killed before anyone unmounts: auto_unmount removes the mount; umount says so in one line.
    func testUnmountingAfterTheDaemonDiedIsOneLine() throws {
        let (fixture, gate) = try newMount()
        try gate.hold()
        try put("bravo\n", fixture.path("b.txt"))
        gate.waitForAHeldSave()
        XCTAssertEqual(fixture.signal(SIGKILL), 128 + SIGKILL)
        // auto_unmount's helper takes the mount away; on a busy machine that can take seconds.
        let deadline = Date().addingTimeInterval(30)
        while fixture.isMounted && Date() < deadline { usleep(10_000) }
        XCTAssertFalse(fixture.isMounted, "auto_unmount removed the mount of the killed daemon")
        let result = try Shell.run(MountFixture.binary, ["umount", fixture.mountpoint])
        XCTAssertEqual(result.status, 1)
        assertOneLine(result.stderr, mentions: ["nothing is mounted", "had ended", "not in " + fixture.container])
        // Said once: a second umount has no daemon left to report.
        let again = try Shell.run(MountFixture.binary, ["umount", fixture.mountpoint])
        XCTAssertEqual(again.status, 1)
        assertOneLine(again.stderr, mentions: ["nothing is mounted on " + fixture.mountpoint])
    }

    /// A stopped daemon: umount says after a few seconds what it waits for, and finishes (0) once
    /// the daemon goes on and saves.
    func testUnmountSaysWhatItWaitsForWhenTheDaemonIsStopped() throws {
        let (fixture, _) = try newMount()
        try put("bravo\n", fixture.path("b.txt"))
        let daemon = try XCTUnwrap(fixture.pid)
        XCTAssertEqual(kill(daemon, SIGSTOP), 0)
        let umount = try startUnmount(fixture)
        let deadline = Date().addingTimeInterval(15)
        while !text(umount.stderr).contains("waiting") && Date() < deadline { usleep(50_000) }
        assertOneLine(text(umount.stderr), mentions: ["waiting for the asicfs daemon (pid \(daemon))", "stopped", "kill -CONT \(daemon)"])
        XCTAssertEqual(kill(daemon, SIGCONT), 0)
        XCTAssertEqual(Shell.wait(umount.pid), 0, text(umount.stderr))
        XCTAssertEqual(fixture.reap(), 0)
        XCTAssertEqual(Set(try containerContents(fixture.container).keys), ["a.txt", "b.txt"])
    }

    func testANormalUnmountSavesAndExitsZero() throws {
        let (fixture, _) = try newMount()
        try put("bravo\n", fixture.path("b.txt"))
        let result = try Shell.run(MountFixture.binary, ["umount", fixture.mountpoint])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(fixture.reap(), 0)
        XCTAssertEqual(Set(try containerContents(fixture.container).keys), ["a.txt", "b.txt"])
    }
}

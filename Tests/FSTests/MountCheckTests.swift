import TestTools
import XCTest

/// A container mount is made first and its container checked on a thread of its own: the
/// mount answers at once (the root's attributes), everything else waits for the check, and a
/// container that fails it takes the mount away while `asicfs mount` reports why. The test
/// hook ASICFS_TEST_HOLD_MOUNT_CHECK holds the check, so the window is deterministic.
final class MountCheckTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "fs-check") }
    override class func tearDown() { shared.stop() }

    /// The daemonized `asicfs mount` (no -f), started with the check held.
    private struct HeldMount {
        let pid: pid_t
        let stderrFile: String
        let hold: String

        init(_ fixture: MountFixture, container: String) throws {
            hold = fixture.folder + "/hold-check"
            stderrFile = fixture.folder + "/mount.err"
            try writeFile([], hold)
            pid = try Shell.spawn(MountFixture.binary, ["mount", container, fixture.mountpoint], stdout: "/dev/null",
                                  stderr: stderrFile, environment: ["ASICFS_TEST_HOLD_MOUNT_CHECK": hold])
            let deadline = Date().addingTimeInterval(10)
            while access(hold + ".held", F_OK) != 0 {
                if Date() > deadline { throw MountError("the check was not held within 10 s: \(stderrText)") }
                usleep(5_000)
            }
        }

        var stderrText: String { (try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? "" }

        /// True while `asicfs mount` has not returned.
        var isWaiting: Bool { waitpid(pid, nil, WNOHANG) == 0 }

        func release() -> Int32 {
            unlink(hold)
            return Shell.wait(pid)
        }
    }

    /// Starts `ls` of the mount point; its output goes to `folder/ls.out` and `ls.err`.
    private func startListing(_ fixture: MountFixture) throws -> pid_t {
        try Shell.spawn("/bin/ls", [fixture.mountpoint], stdout: fixture.folder + "/ls.out", stderr: fixture.folder + "/ls.err")
    }

    private func mode(_ path: String) -> mode_t? {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode : nil
    }

    /// Starts with the magic of a ZIP, but has no central directory.
    private static let damaged = Array(("PK\u{3}\u{4} not really a zip" + String(repeating: ".", count: 200)).utf8)

    private static let damagedLine = "not a valid ZIP file: no end-of-central-directory record (not a ZIP, or truncated)"

    private func heldMountOfADamagedContainer() throws -> (MountFixture, HeldMount) {
        let fixture = try MountFixture(self)
        try writeFile(Self.damaged, fixture.container)
        let mount = try HeldMount(fixture, container: fixture.container)
        addTeardownBlock { unlink(mount.hold) }
        return (fixture, mount)
    }

    func testTheMountAnswersWhileTheCheckRunsAndRequestsWaitForIt() throws {
        let fixture = try MountFixture(self)
        // Signed: its root is not writable once checked, while the provisional root is.
        try MountFixture.makeSigned(fixture.container, Self.shared)
        let mount = try HeldMount(fixture, container: fixture.container)
        addTeardownBlock { unlink(mount.hold) }

        XCTAssertTrue(fixture.isMounted)
        let provisional = try XCTUnwrap(mode(fixture.mountpoint), "the root did not answer while the check ran")
        XCTAssertEqual(provisional & S_IFMT, S_IFDIR)
        XCTAssertEqual(provisional & 0o777, 0o755)
        let listing = try startListing(fixture)
        usleep(300_000)
        XCTAssertEqual(waitpid(listing, nil, WNOHANG), 0, "a listing must wait for the check")
        XCTAssertTrue(mount.isWaiting, "asicfs mount must wait for the check")
        // The request that waits has given the reader role away: the root still answers
        // (--cached=never: a request, not the kernel's cached attributes).
        let again = try Shell.run("/usr/bin/timeout", ["5", "/usr/bin/stat", "--cached=never", "-c", "%a", fixture.mountpoint])
        XCTAssertEqual(again.status, 0, "the root stopped answering while a listing waited: \(again.stderr)")
        XCTAssertEqual(again.stdout, "755\n")

        XCTAssertEqual(mount.release(), 0, mount.stderrText)
        XCTAssertEqual(mount.stderrText, "")
        XCTAssertEqual(Shell.wait(listing), 0)
        let names = try String(contentsOfFile: fixture.folder + "/ls.out", encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(Set(names.map(String.init)), Set(try containerContents(fixture.container).keys.filter { !$0.hasPrefix("META-INF/") && $0 != "mimetype" }))
        // The checked root replaced the provisional one at once (not after the one-second cache).
        XCTAssertEqual(mode(fixture.mountpoint).map { $0 & 0o777 }, 0o555)
        try fixture.unmount()
    }

    func testAContainerThatFailsTheCheckTakesTheMountAwayAndMountReportsIt() throws {
        let (fixture, mount) = try heldMountOfADamagedContainer()

        XCTAssertTrue(fixture.isMounted)
        XCTAssertNotNil(mode(fixture.mountpoint))
        let listing = try startListing(fixture)
        usleep(300_000)
        XCTAssertEqual(waitpid(listing, nil, WNOHANG), 0, "a listing must wait for the check")

        XCTAssertEqual(mount.release(), 1)
        let lines = mount.stderrText.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, mount.stderrText)
        XCTAssertEqual(lines.first.map(String.init), "asicfs: \(fixture.container): \(Self.damagedLine)")
        // The waiting listing got an error, not a hang; nothing stays mounted, nothing changed.
        XCTAssertNotEqual(Shell.wait(listing), 0)
        XCTAssertTrue(try String(contentsOfFile: fixture.folder + "/ls.err", encoding: .utf8).contains("Input/output error"))
        XCTAssertFalse(fixture.isMounted)
        XCTAssertEqual(try readFile(fixture.container), Self.damaged)
        XCTAssertNil(try? FileManager.default.contentsOfDirectory(atPath: fixture.folder).first { $0.contains("asicfs-spool") })
        // The container is free again: a second mount gets as far as the same check.
        let again = try Shell.run(MountFixture.binary, ["mount", fixture.container, fixture.mountpoint])
        XCTAssertEqual(again.status, 1)
        XCTAssertEqual(again.stderr, mount.stderrText)
    }

    func testAMountTakenAwayWhileItsCheckRunsStillReportsTheCheck() throws {
        let (fixture, mount) = try heldMountOfADamagedContainer()
        // The loop ends first (fusermount3 -u); the check fails after that.
        XCTAssertEqual(try Shell.run("fusermount3", ["-u", fixture.mountpoint]).status, 0)
        XCTAssertFalse(fixture.isMounted)
        XCTAssertEqual(mount.release(), 1)
        XCTAssertEqual(mount.stderrText, "asicfs: \(fixture.container): \(Self.damagedLine)\n")
        XCTAssertEqual(try readFile(fixture.container), Self.damaged)
    }

    /// Trust anchors that cannot be read fail `asicfs mount` with one line, leave nothing
    /// mounted and the container as it was (and free for the next mount).
    func testTrustAnchorsThatCannotBeReadFailTheMountWithOneLine() throws {
        let fixture = try MountFixture(self)
        try writeFile(Array("alpha\n".utf8), fixture.folder + "/a.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/a.txt"]).status, 0)
        let before = try readFile(fixture.container)
        let anchors = fixture.folder + "/no-such-anchors.pem"
        let failed = try Shell.run(MountFixture.binary, ["mount", "-o", "trust-anchors=" + anchors, fixture.container, fixture.mountpoint])
        XCTAssertEqual(failed.status, 1)
        XCTAssertEqual(failed.stderr, "asicfs: \(anchors): no such file or folder\n")
        XCTAssertFalse(fixture.isMounted)
        XCTAssertEqual(try readFile(fixture.container), before)
        // The container is free again.
        try fixture.mount()
        XCTAssertEqual(try String(contentsOfFile: fixture.path("a.txt"), encoding: .utf8), "alpha\n")
        try fixture.unmount()
    }

    func testAForegroundMountReportsAFailedCheckTheSameWay() throws {
        let fixture = try MountFixture(self)
        try TestContainers.withDotName(fixture.container)
        let result = try Shell.run(MountFixture.binary, ["mount", "-f", fixture.container, fixture.mountpoint])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("asicfs: \(fixture.container): "), result.stderr)
        XCTAssertTrue(result.stderr.contains("'.' path segment"), result.stderr)
        XCTAssertFalse(fixture.isMounted)
    }
}

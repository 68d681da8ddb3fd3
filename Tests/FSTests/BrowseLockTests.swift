import Foundation
import TestTools
import XCTest

/// The lock a browse mount takes on a container it opens: let go soon after the container's
/// last file closes (so `asicfs add`, a single mount or `asicfs open` can have it), and a
/// container another program holds answers EBUSY, tried again on the next access, instead of
/// turning into a plain file.
final class BrowseLockTests: XCTestCase {
    func asicfs(_ arguments: [String]) throws -> Shell.Output { try Shell.run(MountFixture.binary, arguments) }

    /// A program that holds `path` (flock(1), or a descriptor open through the mount) until the
    /// returned gate is removed; returns once it holds it.
    func hold(_ command: String, _ path: String, in folder: String) throws -> (gate: String, pid: pid_t) {
        let gate = folder + "/gate-\(UUID().uuidString.prefix(6))"
        try writeFile([], gate)
        let script = command == "flock"
            ? "exec /usr/bin/flock -x \"$1\" /bin/sh -c 'touch \"$0.held\"; while [ -e \"$0\" ]; do sleep 0.05; done' \"$2\""
            : "exec 3< \"$1\"; touch \"$2.held\"; while [ -e \"$2\" ]; do sleep 0.05; done"
        let pid = try Shell.spawn("/bin/sh", ["-c", script, "sh", path, gate], stdout: "/dev/null", stderr: "/dev/null")
        XCTAssertTrue(eventually(10) { FileManager.default.fileExists(atPath: gate + ".held") }, "the holder started")
        return (gate, pid)
    }

    func released(_ log: String) -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func testAContainerIsLetGoSoonAfterItsLastFileCloses() throws {
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("a.asice", ["one.txt": "1\n"])
        try fixture.makeContainer("b.asice", ["two.txt": "2\n"])
        try writeFile(Array("added\n".utf8), fixture.mount.folder + "/added.txt")
        try FileManager.default.createDirectory(atPath: fixture.mount.folder + "/new", withIntermediateDirectories: true)
        // The same size and time as the old one.txt: only the bytes differ, which the kernel,
        // if it kept its cached pages, would not notice.
        try writeFile(Array("2\n".utf8), fixture.mount.folder + "/new/one.txt")
        let log = fixture.mount.folder + "/released.log"
        try fixture.start([], environment: ["ASICFS_TEST_RELEASE_LOG": log])

        // b's file stays open in a program; a is read and closed.
        let holder = try hold("open", fixture.path("b.asice/two.txt"), in: fixture.mount.folder)
        XCTAssertEqual(try readFile(fixture.path("a.asice/one.txt")), Array("1\n".utf8))
        var old = Glibc.stat()
        XCTAssertEqual(lstat(fixture.path("a.asice/one.txt"), &old), 0)
        var times = [old.st_atim, old.st_mtim]
        XCTAssertEqual(utimensat(AT_FDCWD, fixture.mount.folder + "/new/one.txt", &times, 0), 0)
        XCTAssertTrue(eventually(20) { self.released(log).contains("a.asice") }, "a.asice was let go: \(released(log))")
        let added = try asicfs(["add", fixture.real("a.asice"), fixture.mount.folder + "/added.txt",
                                fixture.mount.folder + "/new/one.txt", "--replace"])
        XCTAssertEqual(added.status, 0, added.stderr)
        let busy = try asicfs(["add", fixture.real("b.asice"), fixture.mount.folder + "/added.txt"])
        XCTAssertEqual(busy.status, 1, "b.asice has an open file: it is kept")
        XCTAssertTrue(busy.stderr.contains("is open in the asicfs browse mount at \(fixture.mountpoint)"), busy.stderr)
        XCTAssertFalse(released(log).contains("b.asice"))

        // Its last file closed, b is let go too.
        try FileManager.default.removeItem(atPath: holder.gate)
        XCTAssertEqual(Shell.wait(holder.pid), 0)
        XCTAssertTrue(eventually(20) { self.released(log).contains("b.asice") }, "b.asice was let go: \(released(log))")
        let addedToB = try asicfs(["add", fixture.real("b.asice"), fixture.mount.folder + "/added.txt"])
        XCTAssertEqual(addedToB.status, 0, addedToB.stderr)

        // Entered again, a shows what `asicfs add` put in (nothing the kernel cached of the old file).
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.path("a.asice")).sorted(),
                       [".asicfs", "added.txt", "one.txt"])
        var new = Glibc.stat()
        XCTAssertEqual(lstat(fixture.path("a.asice/one.txt"), &new), 0)
        XCTAssertEqual(new.st_mtim.tv_sec, old.st_mtim.tv_sec)
        XCTAssertEqual(new.st_size, old.st_size)
        XCTAssertEqual(try readFile(fixture.path("a.asice/one.txt")), Array("2\n".utf8))
        try fixture.mount.unmount()
        XCTAssertEqual(try containerContents(fixture.real("b.asice")).keys.sorted(), ["added.txt", "two.txt"])
    }

    func testAContainerAnotherProgramHoldsIsBusyAndOpensOnceItIsFree() throws {
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("a.asice", ["one.txt": "1\n"])
        try fixture.start()
        let holder = try hold("flock", fixture.real("a.asice"), in: fixture.mount.folder)
        for _ in 0..<2 {
            let listed = try Shell.run("/bin/ls", [fixture.path("a.asice/")])
            XCTAssertNotEqual(listed.status, 0, listed.stdout)
            XCTAssertTrue(listed.stderr.contains("Device or resource busy"), listed.stderr)
            XCTAssertEqual(statError(fixture.path("a.asice/one.txt")), EBUSY)
        }
        // The reason is logged (a foreground mount: on stderr), naming the holder.
        XCTAssertTrue(fixture.mount.stderrText.contains("asicfs: cannot open a.asice now: "), fixture.mount.stderrText)
        XCTAssertTrue(fixture.mount.stderrText.contains("pid \(holder.pid)"), "pid \(holder.pid): " + fixture.mount.stderrText)
        // Still shown as the container it is (a folder), not as a plain file.
        var st = Glibc.stat()
        XCTAssertEqual(lstat(fixture.path("a.asice"), &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFDIR)

        try FileManager.default.removeItem(atPath: holder.gate)
        XCTAssertEqual(Shell.wait(holder.pid), 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.path("a.asice")).sorted(), [".asicfs", "one.txt"])
        XCTAssertEqual(try readFile(fixture.path("a.asice/one.txt")), Array("1\n".utf8))
        try fixture.mount.unmount()
    }

    /// Two names of one container file: while one is open here, the other is busy (its lock is
    /// taken, by this mount), not a plain file; once the first is let go, the second opens.
    func testAHardLinkToAContainerOpenHereIsBusyUntilItIsLetGo() throws {
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("a.asice", ["one.txt": "1\n"])
        XCTAssertEqual(link(fixture.real("a.asice"), fixture.real("b.asice")), 0)
        let log = fixture.mount.folder + "/released.log"
        try fixture.start([], environment: ["ASICFS_TEST_RELEASE_LOG": log])
        let holder = try hold("open", fixture.path("a.asice/one.txt"), in: fixture.mount.folder)
        let listed = try Shell.run("/bin/ls", [fixture.path("b.asice/")])
        XCTAssertNotEqual(listed.status, 0, listed.stdout)
        XCTAssertTrue(listed.stderr.contains("Device or resource busy"), listed.stderr)
        try FileManager.default.removeItem(atPath: holder.gate)
        XCTAssertEqual(Shell.wait(holder.pid), 0)
        XCTAssertTrue(eventually(20) { self.released(log).contains("a.asice") }, "a.asice was let go: \(released(log))")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.path("b.asice")).sorted(), [".asicfs", "one.txt"])
        XCTAssertEqual(try readFile(fixture.path("b.asice/one.txt")), Array("1\n".utf8))
        try fixture.mount.unmount()
    }

    /// The errno of stat(2), 0 when it succeeds.
    func statError(_ path: String) -> Int32 {
        var st = Glibc.stat()
        return stat(path, &st) == 0 ? 0 : errno
    }
}

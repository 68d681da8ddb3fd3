import Foundation
import TestTools
import XCTest

/// The daemon neither dies nor wedges, and the CLI only ever unmounts its own mounts (issue 29,
/// items C7, C8, C9 and 11).
final class MountSafetyTests: XCTestCase {
    private func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    private func assertOneLine(_ message: String, mentions words: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(message.filter { $0 == "\n" }.count, 1, "one line: \(message)", file: file, line: line)
        XCTAssertTrue(message.hasPrefix("asicfs: "), message, file: file, line: line)
        for word in words { XCTAssertTrue(message.contains(word), "'\(word)' missing in: \(message)", file: file, line: line) }
    }

    /// Where daemons record their pid files (MountRegistry's folder).
    private var registryFolder: String {
        let base = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return "\(base)/asicfs-\(getuid())"
    }

    /// The pid files that name `container` (a daemon writes "PID\nCONTAINER\n").
    private func pidFiles(naming container: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: registryFolder)) ?? []
        return names.filter { $0.hasSuffix(".pid") && text(registryFolder + "/" + $0).hasSuffix("\n\(container)\n") }
    }

    /// C8: a browse daemon run in the foreground exits 0 after a clean unmount and leaves no pid
    /// file (it died with SIGILL, 132, disposing of a semaphore below its initial value).
    func testABrowseDaemonExitsZeroAfterACleanUnmount() throws {
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("a.asice", ["one.txt": "1"])
        try fixture.start()
        try writeFile(Array("two".utf8), fixture.path("a.asice/two.txt"))
        XCTAssertEqual(pidFiles(naming: fixture.tree).count, 1, "the running daemon has its record")
        let umount = try Shell.run(MountFixture.binary, ["umount", fixture.mountpoint])
        XCTAssertEqual(umount.status, 0, umount.stderr)
        XCTAssertEqual(fixture.mount.reap(), 0, fixture.mount.stderrText)
        XCTAssertEqual(pidFiles(naming: fixture.tree), [])
        XCTAssertEqual(try containerContents(fixture.real("a.asice")), ["one.txt": Array("1".utf8), "two.txt": Array("two".utf8)])
    }

    /// C7: a container damaged on disk while its folder is open fails to open again; once a good
    /// copy is back it opens (the failed open's lock, left behind, crashed the daemon with
    /// "Recursive call to lock Mutex" when the next open replaced it).
    func testAContainerDamagedOnDiskAndRepairedOpensAgain() throws {
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("a.asice", ["one.txt": "1"])
        try fixture.makeContainer("b.asice", ["other.txt": "other"])
        try fixture.start()
        XCTAssertEqual(text(fixture.path("a.asice/one.txt")), "1")
        XCTAssertEqual(text(fixture.path("b.asice/other.txt")), "other")
        let good = fixture.mount.folder + "/good.asice"
        XCTAssertEqual(try Shell.run("/bin/cp", [fixture.real("a.asice"), good]).status, 0)
        let damaged = fixture.mount.folder + "/damaged.asice"
        try writeFile(Array("this is no zip".utf8), damaged)
        XCTAssertEqual(rename(damaged, fixture.real("a.asice")), 0)
        XCTAssertTrue(eventually(10) {
            // Entering the folder is what finds the change on disk.
            _ = try? FileManager.default.contentsOfDirectory(atPath: fixture.path("a.asice"))
            var st = stat()
            return lstat(fixture.path("a.asice"), &st) == 0 && st.st_mode & S_IFMT == S_IFREG
        }, "the damaged container is shown as the file it is")
        XCTAssertEqual(rename(good, fixture.real("a.asice")), 0)
        XCTAssertTrue(eventually(10) {
            (try? FileManager.default.contentsOfDirectory(atPath: fixture.path("a.asice")))?.contains("one.txt") ?? false
        }, "the repaired container is a folder again: \(fixture.mount.stderrText)")
        XCTAssertEqual(text(fixture.path("b.asice/other.txt")), "other", "the daemon is alive")
        XCTAssertFalse(fixture.mount.stderrText.contains("Fatal error"), fixture.mount.stderrText)
        try fixture.mount.unmount()
    }

    /// Runs `asicfs mount … -f` and waits at most 15 s for it to end; a mount that deadlocked
    /// is taken away and its daemon killed. Returns the exit status and stderr (nil status: hung).
    private func mountExpectingRefusal(_ source: String, on mountpoint: String, in folder: String) throws -> (status: Int32?, stderr: String) {
        let stderr = folder + "/refused-\(UUID().uuidString.prefix(6)).err"
        let pid = try Shell.spawn(MountFixture.binary, ["mount", source, mountpoint, "-f"], stdout: "/dev/null", stderr: stderr)
        let deadline = Date().addingTimeInterval(15)
        var status: Int32 = 0
        while Date() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid {
                return (status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f), text(stderr))
            }
            usleep(20_000)
        }
        abortFuseMounts(below: folder)
        kill(pid, SIGKILL)
        _ = Shell.wait(pid)
        return (nil, text(stderr))
    }

    /// C9: a container mounted on its own folder (or above it) hid itself from its daemon and every
    /// process touching the path hung; browse mode likewise inside its own folder. Refused, in one
    /// line, before anything is mounted; also when the path reaches the folder through a symlink.
    func testAMountPointAtOrAboveTheContainersFolderIsRefused() throws {
        let base = NSTemporaryDirectory() + "asicfs-self-\(getpid())-\(UUID().uuidString.prefix(8))"
        let inner = base + "/outer/inner"
        try FileManager.default.createDirectory(atPath: inner + "/tree/sub", withIntermediateDirectories: true)
        addTeardownBlock {
            abortFuseMounts(below: base)
            try? FileManager.default.removeItem(atPath: base)
        }
        try writeFile(Array("a".utf8), base + "/a.txt")
        let container = inner + "/self.asice"
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", container, base + "/a.txt"]).status, 0)
        XCTAssertEqual(symlink(inner, base + "/alias"), 0)
        for mountpoint in [inner, base + "/outer", base + "/alias"] {
            let result = try mountExpectingRefusal(container, on: mountpoint, in: base)
            XCTAssertEqual(result.status, 1, "\(mountpoint): \(result.stderr)")
            assertOneLine(result.stderr, mentions: ["cannot mount", "self.asice"])
            abortFuseMounts(below: base)
        }
        for mountpoint in [inner + "/tree", inner + "/tree/sub"] {
            let result = try mountExpectingRefusal(inner + "/tree", on: mountpoint, in: base)
            XCTAssertEqual(result.status, 1, "\(mountpoint): \(result.stderr)")
            assertOneLine(result.stderr, mentions: ["cannot mount", mountpoint.hasSuffix("sub") ? "inside" : "holds"])
            abortFuseMounts(below: base)
        }
    }

    /// 11: `asicfs umount` and `asicfs close` unmounted any filesystem (a tmpfs, a bind mount) and
    /// exited 0; they refuse, in one line, what is not an asicfs mount, and leave it as it is.
    func testUnmountAndCloseRefuseWhatIsNotAnAsicfsMount() throws {
        let base = NSTemporaryDirectory() + "asicfs-other-\(getpid())-\(UUID().uuidString.prefix(8))"
        for folder in ["tmpfs", "source", "bound"] {
            try FileManager.default.createDirectory(atPath: base + "/" + folder, withIntermediateDirectories: true)
        }
        addTeardownBlock {
            unmountEverything(below: base)
            try? FileManager.default.removeItem(atPath: base)
        }
        XCTAssertEqual(try Shell.run("/bin/mount", ["-t", "tmpfs", "asicfs-test-tmpfs", base + "/tmpfs"]).status, 0)
        XCTAssertEqual(try Shell.run("/bin/mount", ["--bind", base + "/source", base + "/bound"]).status, 0)
        for folder in ["tmpfs", "bound"] {
            try writeFile(Array("keep".utf8), base + "/" + folder + "/keep.txt")
        }
        for command in ["umount", "close"] {
            for folder in ["tmpfs", "bound"] {
                let mountpoint = base + "/" + folder
                let result = try Shell.run(MountFixture.binary, [command, mountpoint])
                XCTAssertEqual(result.status, 1, "\(command) \(folder): \(result.stderr)")
                assertOneLine(result.stderr, mentions: ["not an asicfs mount", mountpoint])
                XCTAssertEqual(text(mountpoint + "/keep.txt"), "keep", "\(command) \(folder)")
            }
        }
    }
}

import Foundation
import TestTools
import XCTest

/// The spool beside a container, in a folder other users can write (issue 29, items A2 and 17):
/// nothing another user planted is ever written through, the bytes saved are the ones written
/// into the mount, and container names up to NAME_MAX work.
final class SpoolSafetyTests: XCTestCase {
    /// A program that writes `bytes` into `path`, keeps the file open until `release`, then closes it.
    private final class HeldWriter {
        let pid: pid_t
        let ready: String
        let go: String

        init(_ path: String, size: Int, in folder: String) throws {
            ready = folder + "/writer-\(UUID().uuidString.prefix(6)).ready"
            go = folder + "/writer-\(UUID().uuidString.prefix(6)).go"
            XCTAssertEqual(mkfifo(go, 0o600), 0)
            pid = try Shell.spawn("/usr/bin/python3", ["-c", """
                import sys
                f = open(sys.argv[1], 'wb'); f.write(b'A' * int(sys.argv[2])); f.flush()
                open(sys.argv[3], 'w').close()
                open(sys.argv[4]).read()
                f.close()
                """, path, String(size), ready, go], stdout: "/dev/null", stderr: folder + "/writer.err")
            XCTAssertTrue(eventually(10) { access(self.ready, F_OK) == 0 }, "the writer has written")
        }

        /// Lets the writer close its file and waits for it.
        func release() -> Int32 {
            let fd = open(go, O_WRONLY)
            if fd >= 0 { close(fd) }
            return Shell.wait(pid)
        }
    }

    private static let size = 200 << 10

    /// A fixture whose folder is shared: `mode` 01777 (like /tmp) or 0777, beside a folder
    /// `evil` that belongs to the other user.
    private func sharedFixture(mode: mode_t) throws -> (MountFixture, String) {
        let base = NSTemporaryDirectory() + "asicfs-spool-\(getpid())-\(UUID().uuidString.prefix(8))"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: base) }
        let fixture = try MountFixture(self, folder: base + "/shared")
        XCTAssertEqual(chmod(base, 0o755), 0)
        XCTAssertEqual(chmod(fixture.folder, mode), 0)
        let attacker = try SecondUser.account()
        let evil = base + "/evil"
        try FileManager.default.createDirectory(atPath: evil, withIntermediateDirectories: true)
        XCTAssertEqual(chown(evil, attacker.uid, attacker.gid), 0)
        XCTAssertEqual(chmod(evil, 0o777), 0)
        try writeFile(Array("a".utf8), base + "/a.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, base + "/a.txt"]).status, 0)
        return (fixture, evil)
    }

    /// A2: another user plants `.NAME.asicfs-spool-PID` (a symlink to their own folder) for the
    /// daemon's PID before it makes its spool folder (held there by the mount-check gate). The
    /// daemon wrote the spooled bytes through it, where that user could change them before the save.
    func testASpoolFolderPlantedByAnotherUserIsNeverWrittenThrough() throws {
        let (fixture, evil) = try sharedFixture(mode: 0o1777)
        let attacker = try SecondUser.account()
        let gate = fixture.folder + "/hold-check"
        try writeFile([], gate)
        addTeardownBlock { unlink(gate) }
        try fixture.mount(environment: ["ASICFS_TEST_HOLD_MOUNT_CHECK": gate])
        XCTAssertTrue(eventually(10) { access(gate + ".held", F_OK) == 0 }, "the check is held")
        let planted = fixture.folder + "/.container.asice.asicfs-spool-\(fixture.pid ?? 0)"
        XCTAssertEqual(try attacker.sh("ln -s \"$1\" \"$2\"", [evil, planted]).status, 0)
        unlink(gate)

        let writer = try HeldWriter(fixture.path("big.bin"), size: Self.size, in: fixture.folder)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: evil), [], "nothing is written through the planted link")
        XCTAssertEqual(try attacker.sh("for f in \"$1\"/*; do [ -f \"$f\" ] && printf 1000000 > \"$f\"; done; true", [evil]).status, 0)
        XCTAssertEqual(writer.release(), 0)
        try fixture.unmount()
        XCTAssertEqual(try containerContents(fixture.container)["big.bin"], [UInt8](repeating: UInt8(ascii: "A"), count: Self.size))
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: planted), evil, "the planted link is left alone")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: evil), [])
    }

    /// A2: in a folder everyone may write (no sticky bit), another user renames the daemon's spool
    /// folder away and puts one of their own in its place. The save read the spool file by its path
    /// and put that user's bytes into the container; it reads through the descriptor that wrote them.
    func testASpoolFolderSwappedByAnotherUserDoesNotChangeWhatIsSaved() throws {
        let (fixture, _) = try sharedFixture(mode: 0o777)
        let attacker = try SecondUser.account()
        try fixture.mount()
        let writer = try HeldWriter(fixture.path("big.bin"), size: Self.size, in: fixture.folder)
        let spools = try FileManager.default.contentsOfDirectory(atPath: fixture.folder).filter { $0.contains(".asicfs-spool-") }
        XCTAssertEqual(spools.count, 1, "\(spools)")
        let spool = fixture.folder + "/" + (spools.first ?? "none")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: spool)) ?? []
        XCTAssertEqual(files.count, 1, "\(files)")
        let swap = try attacker.sh("mv \"$1\" \"$1.gone\" && mkdir \"$1\" && printf 'attacker bytes' > \"$1/$2\"",
                                   [spool, files.first ?? "1"])
        XCTAssertEqual(swap.status, 0, swap.stderr)
        XCTAssertEqual(writer.release(), 0)
        try fixture.unmount()
        XCTAssertEqual(try containerContents(fixture.container)["big.bin"], [UInt8](repeating: UInt8(ascii: "A"), count: Self.size))
        XCTAssertEqual((try? String(contentsOfFile: spool + "/" + (files.first ?? "1"), encoding: .utf8)), "attacker bytes",
                       "the other user's folder is not ours to clean up")
    }

    /// 17: a container name of 250 bytes (NAME_MAX is 255) can be created, changed and mounted:
    /// temporary and spool names no longer add a suffix to it.
    func testAContainerNameNearNameMaxCanBeCreatedChangedAndMounted() throws {
        let fixture = try MountFixture(self)
        let container = fixture.folder + "/" + String(repeating: "n", count: 244) + ".asice"
        try writeFile(Array("a".utf8), fixture.folder + "/a.txt")
        try writeFile(Array("b".utf8), fixture.folder + "/b.txt")
        let created = try Shell.run(MountFixture.binary, ["create", "-q", container, fixture.folder + "/a.txt"])
        XCTAssertEqual(created.status, 0, created.stderr)
        let added = try Shell.run(MountFixture.binary, ["add", container, fixture.folder + "/b.txt"])
        XCTAssertEqual(added.status, 0, added.stderr)
        try fixture.mount(container: container)
        try writeFile([UInt8](repeating: 7, count: Self.size), fixture.path("big.bin"))
        try fixture.unmount()
        let contents = try containerContents(container)
        XCTAssertEqual(contents["a.txt"], Array("a".utf8))
        XCTAssertEqual(contents["b.txt"], Array("b".utf8))
        XCTAssertEqual(contents["big.bin"], [UInt8](repeating: 7, count: Self.size))
        let left = try FileManager.default.contentsOfDirectory(atPath: fixture.folder).filter { $0.contains(".asicfs-") }
        XCTAssertEqual(left, [])
    }

    /// The spool folder a killed daemon left (random suffix and all) is named by `asicfs umount`,
    /// and the next mount of the container removes it.
    func testAKilledDaemonsSpoolFolderIsNamedByUmountAndRemovedByTheNextMount() throws {
        let fixture = try MountFixture(self)
        try writeFile(Array("a".utf8), fixture.folder + "/a.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/a.txt"]).status, 0)
        try fixture.mount()
        let daemon = try XCTUnwrap(fixture.pid)
        let writer = try HeldWriter(fixture.path("big.bin"), size: Self.size, in: fixture.folder)
        XCTAssertEqual(fixture.signal(SIGKILL), 128 + SIGKILL)
        _ = writer.release()  // its close fails: the mount is gone
        XCTAssertTrue(eventually(30) { !fixture.isMounted }, "auto_unmount removed the mount of the killed daemon")
        let spools = try FileManager.default.contentsOfDirectory(atPath: fixture.folder).filter { $0.contains(".asicfs-spool-") }
        XCTAssertEqual(spools.count, 1, "\(spools)")
        let left = fixture.folder + "/" + (spools.first ?? "none")
        XCTAssertTrue(left.hasPrefix(fixture.folder + "/.container.asice.asicfs-spool-\(daemon)-"), left)
        let umount = try Shell.run(MountFixture.binary, ["umount", fixture.mountpoint])
        XCTAssertEqual(umount.status, 1)
        XCTAssertTrue(umount.stderr.contains("over 64 KiB are in \(left) "), umount.stderr)
        try fixture.mount()
        XCTAssertEqual(try readFile(fixture.path("a.txt")), Array("a".utf8))  // answered once the check is done
        XCTAssertFalse(FileManager.default.fileExists(atPath: left), "the next mount removed it")
        try fixture.unmount()
    }

    /// A2 in browse mode, where the daemon may be root: another user who can write a folder of
    /// the tree plants `.NAME.asicfs-spool-PID` there (PID: the daemon's; browse mode makes a
    /// container's spool folder at its first write) pointing at a folder only root may write.
    /// The daemon made its spool files there, with root's rights.
    func testABrowseDaemonNeverWritesThroughAPlantedSpoolName() throws {
        let fixture = try BrowseFixture(self)
        let attacker = try SecondUser.account()
        try fixture.makeContainer("shared/c.asice", ["one.txt": "1"])
        XCTAssertEqual(chmod(fixture.mount.folder, 0o755), 0)
        XCTAssertEqual(chmod(fixture.tree, 0o755), 0)
        XCTAssertEqual(chmod(fixture.real("shared"), 0o1777), 0)
        let rootOnly = fixture.mount.folder + "/root-only"
        try FileManager.default.createDirectory(atPath: rootOnly, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(rootOnly, 0o700), 0)
        try fixture.start(["allow_other"])
        let planted = fixture.real("shared/.c.asice.asicfs-spool-\(fixture.mount.pid ?? 0)")
        XCTAssertEqual(try attacker.sh("ln -s \"$1\" \"$2\"", [rootOnly, planted]).status, 0)
        let writer = try HeldWriter(fixture.path("shared/c.asice/big.bin"), size: Self.size, in: fixture.mount.folder)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: rootOnly), [], "nothing is written through the planted link")
        XCTAssertEqual(writer.release(), 0)
        try fixture.mount.unmount()
        XCTAssertEqual(try containerContents(fixture.real("shared/c.asice"))["big.bin"],
                       [UInt8](repeating: UInt8(ascii: "A"), count: Self.size))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: rootOnly), [])
    }
}

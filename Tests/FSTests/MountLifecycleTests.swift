import TestTools
import XCTest

/// Mounting, unmounting, signals, a killed daemon, and failures during a copy-in.
final class MountLifecycleTests: XCTestCase {
    func testMountingSomethingThatIsNotAContainerFailsAndLeavesNothingMounted() throws {
        let fixture = try MountFixture(self)
        try writeFile(Array("not a zip".utf8), fixture.container)
        let result = try Shell.run(MountFixture.binary, ["mount", fixture.container, fixture.mountpoint])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("not a valid ZIP file"), result.stderr)
        XCTAssertFalse(fixture.isMounted)
        let dot = fixture.folder + "/dot.asice"
        try TestContainers.withDotName(dot)
        let corpus = try Shell.run(MountFixture.binary, ["mount", dot, fixture.mountpoint])
        XCTAssertEqual(corpus.status, 1)
        XCTAssertTrue(corpus.stderr.contains("'.' path segment"), corpus.stderr)
        XCTAssertFalse(fixture.isMounted)
    }

    func testDaemonizedMountAndUmountCommand() throws {
        let fixture = try MountFixture(self)
        let mount = try Shell.run(MountFixture.binary, ["mount", fixture.container, fixture.mountpoint, "-o", "create"])
        XCTAssertEqual(mount.status, 0, mount.stderr)
        XCTAssertTrue(fixture.isMounted)
        try writeFile(Array("daemon".utf8), fixture.path("d.txt"))
        let umount = try Shell.run(MountFixture.binary, ["umount", fixture.mountpoint])
        XCTAssertEqual(umount.status, 0, umount.stderr)
        XCTAssertFalse(fixture.isMounted)
        // umount waits for the daemon to save: the file is in the container right away.
        XCTAssertEqual(try containerContents(fixture.container)["d.txt"], Array("daemon".utf8))
    }

    func testFusermountAndSignalsEndTheMountCleanly() throws {
        for way in ["fusermount3", "SIGTERM", "SIGINT"] {
            let fixture = try MountFixture(self)
            try fixture.mount(["create"])
            try writeFile(Array(way.utf8), fixture.path("w.txt"))
            let status: Int32?
            switch way {
            case "fusermount3":
                XCTAssertEqual(try Shell.run("fusermount3", ["-u", fixture.mountpoint]).status, 0)
                status = fixture.signal(0) // signal 0 only reaps: the daemon exits by itself after the unmount
            case "SIGTERM": status = fixture.signal(SIGTERM)
            default: status = fixture.signal(SIGINT)
            }
            XCTAssertEqual(status, 0, way)
            XCTAssertFalse(fixture.isMounted, way)
            XCTAssertEqual(try containerContents(fixture.container)["w.txt"], Array(way.utf8), way)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: fixture.folder).filter { $0.contains(".asicfs-") }
            XCTAssertEqual(leftovers, [], way)
        }
    }

    /// The kernel sends RELEASE after close() has returned, without waiting (and the mount has
    /// no FLUSH, which close() would wait for). A file closed while the daemon reads nothing
    /// (`ASICFS_TEST_HOLD_READS`) has its RELEASE still queued when the stop comes: a signal
    /// serves what is queued before saving, an unmount (which the kernel does only once no file
    /// is open) drops it, and either way the file is saved, not rescued as if still being written.
    func testAFileClosedJustBeforeTheStopIsSavedWhenItsReleaseWasStillQueued() throws {
        for way in ["SIGTERM", "fusermount3"] {
            let fixture = try MountFixture(self)
            let gate = fixture.folder + "/hold-reads"
            addTeardownBlock { unlink(gate) }
            try fixture.mount(["create"], environment: ["ASICFS_TEST_HOLD_READS": gate])
            // The first close of the mount still asks FLUSH (and learns there is none).
            try writeFile(Array("first".utf8), fixture.path("first.txt"))
            let fd = open(fixture.path("closed.txt"), O_WRONLY | O_CREAT | O_EXCL, 0o644)
            XCTAssertGreaterThanOrEqual(fd, 0, way)
            XCTAssertEqual(Glibc.write(fd, "closed", 6), 6, way)

            // The reader notices the gate within a few milliseconds, with no request to read.
            try writeFile([], gate)
            let deadline = Date().addingTimeInterval(10)
            while access(gate + ".held", F_OK) != 0, Date() < deadline { usleep(5_000) }
            XCTAssertEqual(access(gate + ".held", F_OK), 0, "the reader did not stop reading: \(way)")
            XCTAssertEqual(close(fd), 0, way)

            let status: Int32?
            if way == "SIGTERM" {
                status = fixture.signal(SIGTERM)
            } else {
                XCTAssertEqual(try Shell.run("fusermount3", ["-u", fixture.mountpoint]).status, 0, way)
                unlink(gate)
                status = fixture.reap()
            }
            XCTAssertEqual(status, 0, "\(way): \(fixture.stderrText)")
            XCTAssertFalse(fixture.isMounted, way)
            let contents = try containerContents(fixture.container)
            XCTAssertEqual(contents["first.txt"], Array("first".utf8), way)
            XCTAssertEqual(contents["closed.txt"], Array("closed".utf8), way)
            let rescued = try FileManager.default.contentsOfDirectory(atPath: fixture.folder).filter { $0.contains(".asicfs-unsaved-") }
            XCTAssertEqual(rescued, [], way)
        }
    }

    /// libfuse drops a request its worker has read when the session is told to stop before the
    /// worker serves it; a RELEASE lost so left its file looking open for writing, rescued instead
    /// of saved (now and then, under load). Holding the reader right after it has read the RELEASE
    /// (`ASICFS_TEST_HOLD_RELEASE`, which a stop ends) puts the signal in that window every time.
    func testASignalBetweenReadingAReleaseAndServingItStillSavesTheFile() throws {
        for stop in [SIGINT, SIGTERM] {
            let fixture = try MountFixture(self)
            let gate = fixture.folder + "/hold-release"
            addTeardownBlock { unlink(gate) }
            try writeFile([], gate)
            try fixture.mount(["create"], environment: ["ASICFS_TEST_HOLD_RELEASE": gate])
            try writeFile(Array("closed".utf8), fixture.path("w.txt"))
            let deadline = Date().addingTimeInterval(10)
            while access(gate + ".held", F_OK) != 0, Date() < deadline { usleep(5_000) }
            XCTAssertEqual(access(gate + ".held", F_OK), 0, "the reader did not hold the RELEASE: signal \(stop)")

            let status = fixture.signal(stop)
            unlink(gate)
            XCTAssertEqual(status, 0, "signal \(stop): \(fixture.stderrText)")
            XCTAssertNotEqual(access(gate + ".held", F_OK), 0, "the stop ended the hold: signal \(stop)")
            XCTAssertFalse(fixture.isMounted, "signal \(stop)")
            XCTAssertEqual(try containerContents(fixture.container)["w.txt"], Array("closed".utf8), "signal \(stop)")
            let rescued = try FileManager.default.contentsOfDirectory(atPath: fixture.folder).filter { $0.contains(".asicfs-unsaved-") }
            XCTAssertEqual(rescued, [], "signal \(stop)")
        }
    }

    /// A file closed before the stop is saved; a file still open for writing is not saved
    /// half-written but rescued beside the container.
    func testAStopWhileAFileIsStillBeingWrittenRescuesIt() throws {
        let fixture = try MountFixture(self)
        try fixture.mount(["create"])
        try writeFile(Array("closed".utf8), fixture.path("closed.txt"))
        let writer = try Shell.spawn("/usr/bin/python3", ["-c", """
            import sys, time
            f = open(sys.argv[1], "w"); f.write("partial"); f.flush()
            print("written", flush=True); time.sleep(60)
            """, fixture.path("open.txt")], stdout: fixture.folder + "/writer.out", stderr: fixture.folder + "/writer.err")
        defer {
            kill(writer, SIGKILL)
            _ = Shell.wait(writer)
        }
        let deadline = Date().addingTimeInterval(10)
        while (try? String(contentsOfFile: fixture.folder + "/writer.out", encoding: .utf8)) != "written\n", Date() < deadline {
            usleep(20_000)
        }
        XCTAssertEqual(fixture.signal(SIGTERM), 1, "the stop reports that a file was not saved")
        XCTAssertFalse(fixture.isMounted)
        let contents = try containerContents(fixture.container)
        XCTAssertEqual(contents["closed.txt"], Array("closed".utf8))
        XCTAssertNil(contents["open.txt"], "a half-written file is not put into the container")
        let rescued = try FileManager.default.contentsOfDirectory(atPath: fixture.folder).filter { $0.contains(".asicfs-unsaved-") }
        XCTAssertEqual(rescued.count, 1, "\(rescued)")
        XCTAssertEqual(try readFile(fixture.folder + "/" + (rescued.first ?? "") + "/open.txt"), Array("partial".utf8))
    }

    func testAKilledDaemonLeavesNoDeadMountAndAValidContainer() throws {
        let fixture = try MountFixture(self)
        try fixture.mount(["create"])
        try writeFile(Array("before".utf8), fixture.path("before.txt"))
        let fsync = try Shell.python("import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)", [fixture.path("before.txt")])
        XCTAssertEqual(fsync.status, 0, fsync.stderr)
        let saved = try readFile(fixture.container)
        // Start a large copy-in and kill the daemon in the middle of it.
        let big = fixture.folder + "/big.bin"
        XCTAssertEqual(try Shell.sh("head -c 200000000 /dev/urandom > '\(big)'").status, 0)
        let copy = try Shell.spawn("/bin/cp", [big, fixture.path("big.bin")], stdout: "/dev/null", stderr: "/dev/null")
        usleep(150_000)
        XCTAssertEqual(fixture.signal(SIGKILL), 128 + SIGKILL)
        _ = Shell.wait(copy)
        // auto_unmount: the kernel mount goes away with the daemon.
        let deadline = Date().addingTimeInterval(5)
        while fixture.isMounted && Date() < deadline { usleep(20_000) }
        XCTAssertFalse(fixture.isMounted, "no dead mount after SIGKILL")
        let after = try readFile(fixture.container)
        XCTAssertTrue(after == saved || (try? containerContents(fixture.container)) != nil, "old or new, and valid")
        XCTAssertEqual(try containerContents(fixture.container)["before.txt"], Array("before".utf8))
        // The next mount cleans up what the killed daemon left behind.
        try fixture.mount()
        try fixture.unmount()
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: fixture.folder).filter { $0.contains(".asicfs-") }
        XCTAssertEqual(leftovers, [])
    }

    func testAFullDiskDuringACopyInFailsWithENOSPCAndKeepsTheContainer() throws {
        let disk = NSTemporaryDirectory() + "asicfs-fsfull-\(getpid())-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mounted = try Shell.run("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", disk])
        XCTAssertEqual(mounted.status, 0, "mounting a tmpfs needs root: \(mounted.stderr)")
        addTeardownBlock {
            _ = try? Shell.run("umount", ["-l", disk])
            try? FileManager.default.removeItem(atPath: disk)
        }
        let fixture = try MountFixture(self, folder: disk)
        try writeFile(Array("kept".utf8), disk + "/kept.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, disk + "/kept.txt"]).status, 0)
        let before = try readFile(fixture.container)
        try fixture.mount()
        let big = NSTemporaryDirectory() + "asicfs-big-\(getpid()).bin"
        XCTAssertEqual(try Shell.sh("head -c 20000000 /dev/urandom > '\(big)'").status, 0)
        defer { unlink(big) }
        let copy = try Shell.sh("cp '\(big)' '\(fixture.mountpoint)/big.bin'")
        XCTAssertNotEqual(copy.status, 0)
        XCTAssertTrue(copy.stderr.contains("No space left on device"), copy.stderr)
        try fixture.unmount()
        XCTAssertEqual(try readFile(fixture.container), before)
    }

    func testAChangeByAnotherProgramIsNeverOverwrittenAndUnsavedFilesAreRescued() throws {
        let fixture = try MountFixture(self)
        try fixture.mount(["create"])
        // A commit happens only after a quiet moment: change the container underneath first.
        // (asicfs itself refuses to change a mounted container: the other program replaces the
        // file, as an editor or a sync client would.)
        try writeFile(Array("outside".utf8), fixture.folder + "/outside.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", fixture.folder + "/other.asice", fixture.folder + "/outside.txt"]).status, 0)
        XCTAssertEqual(rename(fixture.folder + "/other.asice", fixture.container), 0)
        // (No fsync here: an fsync would try to save at once, and fail with EIO for the same reason.)
        XCTAssertEqual(try Shell.sh("printf inside > '\(fixture.path("inside.txt"))'").status, 0)
        let umount = try Shell.run(MountFixture.binary, ["umount", fixture.mountpoint])
        XCTAssertEqual(umount.status, 1, "umount reports that the daemon could not save")
        XCTAssertTrue(umount.stderr.contains("changed by another program") && umount.stderr.contains("unsaved files are in"),
                      umount.stderr)
        XCTAssertEqual(fixture.signal(0), 1, "the daemon reports that it could not save")
        // The other program's change is kept, and the file written in the mount is not lost.
        XCTAssertEqual(Set(try containerContents(fixture.container).keys), ["outside.txt"])
        let rescued = try FileManager.default.contentsOfDirectory(atPath: fixture.folder).filter { $0.contains(".asicfs-unsaved-") }
        XCTAssertEqual(rescued.count, 1)
        XCTAssertEqual(try readFile(fixture.folder + "/" + rescued[0] + "/inside.txt"), Array("inside".utf8))
    }
}

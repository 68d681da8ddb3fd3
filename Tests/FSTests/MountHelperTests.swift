import Foundation
import TestTools
import XCTest

/// asicfs as mount(8) and fstab run FUSE programs: `mount -t fuse.asicfs`, mount.fuse3 with
/// fstab-only options, `umask=`, an error at mount time before detaching, and a detached
/// daemon's errors in the system log.
final class MountHelperTests: XCTestCase {
    var binaryFolder: String { URL(fileURLWithPath: MountFixture.binary).deletingLastPathComponent().path }

    /// The tools run with the built asicfs first on PATH (mount.fuse3 finds "asicfs" there).
    func run(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Shell.Output {
        let path = binaryFolder + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/sbin:/usr/bin:/sbin:/bin")
        return try Shell.run(program, arguments, environment: environment.merging(["PATH": path]) { $1 })
    }

    func container(_ fixture: MountFixture) throws {
        try writeFile(Array("a\n".utf8), fixture.folder + "/a.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", fixture.container, fixture.folder + "/a.txt"]).status, 0)
    }

    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    func unmountDetached(_ fixture: MountFixture) throws {
        let unmounted = try Shell.run(MountFixture.binary, ["umount", fixture.mountpoint])
        XCTAssertEqual(unmounted.status, 0, unmounted.stderr)
        XCTAssertFalse(fixture.isMounted)
    }

    /// mount(8) runs "mount.fuse3 SOURCE MOUNTPOINT -t fuse.asicfs -o OPTIONS" (with its own
    /// PATH, so `mount -t fuse.asicfs` itself needs asicfs installed: CI's package test does that),
    /// and mount.fuse3 runs "asicfs SOURCE MOUNTPOINT -o OPTIONS".
    func testMountDashTAndAnFstabLineThroughMountFuse3() throws {
        let fixture = try MountFixture(self)
        try container(fixture)
        let mounted = try run("/sbin/mount.fuse3", [fixture.container, fixture.mountpoint, "-t", "fuse.asicfs", "-o", "ro"])
        XCTAssertEqual(mounted.status, 0, mounted.stderr)
        XCTAssertTrue(fixture.isMounted)
        XCTAssertEqual(try String(contentsOfFile: fixture.path("a.txt"), encoding: .utf8), "a\n")
        XCTAssertNotEqual(try Shell.sh("echo x > '\(fixture.path("b.txt"))'").status, 0, "read-only")
        try unmountDetached(fixture)

        // What an fstab line "CONTAINER MOUNTPOINT fuse.asicfs noauto,user,... 0 0" runs.
        let fstab = try run("/sbin/mount.fuse3", [fixture.container, fixture.mountpoint, "-t", "fuse.asicfs", "-o",
                                                  "defaults,noauto,user,nofail,_netdev,x-systemd.automount,comment=x,umask=077"])
        XCTAssertEqual(fstab.status, 0, fstab.stderr)
        XCTAssertEqual(try mode(fixture.path("a.txt")), 0o600)
        XCTAssertEqual(try mode(fixture.mountpoint), 0o700)
        try writeFile(Array("b\n".utf8), fixture.path("b.txt"))
        try unmountDetached(fixture)
        XCTAssertEqual(try containerContents(fixture.container)["b.txt"], Array("b\n".utf8))

        // umask=000 takes nothing away and adds nothing: data files are never executable.
        XCTAssertEqual(try run(MountFixture.binary, [fixture.container, fixture.mountpoint, "-o", "umask=000"]).status, 0)
        XCTAssertEqual(try mode(fixture.path("a.txt")), 0o644)
        try unmountDetached(fixture)
        let badMask = try run(MountFixture.binary, [fixture.container, fixture.mountpoint, "-o", "umask=99"])
        XCTAssertEqual(badMask.status, 2, badMask.stderr)
        XCTAssertTrue(badMask.stderr.contains("umask= takes an octal mask"), badMask.stderr)
    }

    func testABadOptionFailsBeforeDetachingAndLeavesNoMount() throws {
        let fixture = try MountFixture(self)
        try container(fixture)
        let refused = try run(MountFixture.binary, [fixture.container, fixture.mountpoint, "-o", "no_such_option"])
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("unknown mount option 'no_such_option'"), refused.stderr)
        XCTAssertEqual(refused.stderr.split(separator: "\n").filter { $0.hasPrefix("asicfs: ") }.count, 1, refused.stderr)
        XCTAssertFalse(fixture.isMounted)
    }

    /// A detached daemon has no terminal: a failed signing goes to the system log (a test socket
    /// standing in for /dev/log) as one RFC 3164 line.
    func testADetachedDaemonsErrorsGoToTheSystemLog() throws {
        let fixture = try MountFixture(self)
        try container(fixture)
        let socket = fixture.folder + "/log.sock"
        let received = fixture.folder + "/log.txt"
        let listener = try Shell.spawn("/usr/bin/python3", ["-c", """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1])
            open(sys.argv[2], 'w').close()
            while True:
                with open(sys.argv[2], 'ab') as f: f.write(s.recv(8192) + b'\\n')
            """, socket, received], stdout: "/dev/null", stderr: "/dev/null")
        defer { kill(listener, SIGTERM); _ = Shell.wait(listener) }
        while !FileManager.default.fileExists(atPath: received) { usleep(10_000) }
        let mounted = try run(MountFixture.binary, ["mount", fixture.container, fixture.mountpoint], environment: ["ASICFS_TEST_SYSLOG": socket])
        XCTAssertEqual(mounted.status, 0, mounted.stderr)
        let request = try Shell.sh("echo 'file=/nonexistent.p12 passphrase-file=/nonexistent' > '\(fixture.path(".asicfs/sign/pkcs12"))'")
        XCTAssertEqual(request.status, 0, request.stderr)
        _ = try Shell.run("/bin/cat", [fixture.path(".asicfs/status/wait")])
        try unmountDetached(fixture)
        let log = try String(contentsOfFile: received, encoding: .utf8)
        XCTAssertNotNil(log.range(of: #"<11>asicfs\[\d+\]: .*container\.asice: signing with pkcs12 failed: "#, options: .regularExpression), log)
        XCTAssertEqual(log.split(separator: "\n").count, 1, log)
    }
}

import Foundation
import TestTools
import XCTest

/// One user of a container at a time: while it is mounted, a second mount and `asicfs add`,
/// `remove`, `sign` and `extend` fail at once with a line that names the mount; the lock follows
/// the container through the mount's saves and ends with the daemon.
final class ContainerLockTests: XCTestCase {
    func asicfs(_ arguments: [String]) throws -> Shell.Output { try Shell.run(MountFixture.binary, arguments) }

    func testWhileMountedNoOtherAsicfsChangesTheContainer() throws {
        let fixture = try MountFixture(self)
        try writeFile(Array("a\n".utf8), fixture.folder + "/a.txt")
        XCTAssertEqual(try asicfs(["create", fixture.container, fixture.folder + "/a.txt"]).status, 0)
        try fixture.mount()
        let before = try readFile(fixture.container)
        let named = "\(fixture.container): it is mounted at \(fixture.mountpoint) by asicfs (pid "

        let other = fixture.folder + "/other-mnt"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        for arguments in [["mount", fixture.container, other], ["add", fixture.container, fixture.folder + "/a.txt", "--replace"],
                          ["remove", fixture.container, "a.txt"], ["remove", fixture.container, "--signature", "0"],
                          ["sign", fixture.container, "--method", "pkcs12", "file=/nonexistent.p12", "passphrase-file=/nonexistent"],
                          ["extend", fixture.container]] {
            let refused = try asicfs(arguments)
            XCTAssertEqual(refused.status, 1, "\(arguments): \(refused.stderr)")
            XCTAssertTrue(refused.stderr.hasPrefix("asicfs: " + named), "\(arguments): \(refused.stderr)")
            XCTAssertTrue(refused.stderr.hasSuffix("); unmount it first (asicfs umount \(fixture.mountpoint))\n"), refused.stderr)
            XCTAssertEqual(refused.stderr.split(separator: "\n").count, 1, refused.stderr)
        }
        XCTAssertEqual(try readFile(fixture.container), before)
        // Readers are welcome.
        XCTAssertEqual(try asicfs(["ls", fixture.container]).status, 0)

        // The mount saves (a new file replaces the old): the lock is on the new one.
        try writeFile(Array("b\n".utf8), fixture.path("b.txt"))
        let synced = try Shell.run("/bin/sync", [fixture.path("b.txt")])
        XCTAssertEqual(synced.status, 0, synced.stderr)
        XCTAssertEqual(try Shell.python("import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)", [fixture.path("b.txt")]).status, 0)
        XCTAssertNotEqual(try readFile(fixture.container), before, "the mount saved")
        let afterSave = try asicfs(["add", fixture.container, fixture.folder + "/a.txt", "--replace"])
        XCTAssertTrue(afterSave.stderr.hasPrefix("asicfs: " + named), afterSave.stderr)

        // Gone with the daemon.
        try fixture.unmount()
        let added = try asicfs(["add", fixture.container, fixture.folder + "/a.txt", "--replace"])
        XCTAssertEqual(added.status, 0, added.stderr)
    }

    func testAnotherProgramHoldingTheLockIsNamed() throws {
        let folder = NSTemporaryDirectory() + "asicfs-lock-\(getpid())-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try writeFile(Array("a\n".utf8), folder + "/a.txt")
        XCTAssertEqual(try asicfs(["create", folder + "/c.asice", folder + "/a.txt"]).status, 0)
        // flock(1) holds the container's lock while asicfs tries to change it.
        let refused = try Shell.run("/usr/bin/flock", ["-x", folder + "/c.asice", MountFixture.binary, "remove", folder + "/c.asice", "a.txt"])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertNotNil(refused.stderr.range(of: #"^asicfs: .*/c\.asice: flock \(pid \d+\) is changing it; try again when it is done\n$"#,
                                             options: .regularExpression), refused.stderr)
        XCTAssertEqual(try asicfs(["remove", folder + "/c.asice", "a.txt"]).status, 0)
    }
}

import Foundation
import TestTools
import XCTest

/// `asicfs mount -o …` checks its options before anything is mounted: one libfuse does not take
/// is named with the setting or option it is closest to (usage error, exit status 2), not
/// libfuse's internal option string; a setting naming a file that is not there is refused too.
final class MountOptionCheckTests: XCTestCase {
    func mountable() throws -> MountFixture {
        let fixture = try MountFixture(self)
        try writeFile(Array("alpha\n".utf8), fixture.folder + "/a.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/a.txt"]).status, 0)
        return fixture
    }

    func mount(_ fixture: MountFixture, _ option: String) throws -> Shell.Output {
        try Shell.run("/bin/sh", ["-c", "cd '\(fixture.folder)' && exec '\(MountFixture.binary)' mount container.asice mnt -o '\(option)'"])
    }

    /// (Before: exit 1, "fuse: unknown option(s)" and "invalid mount options: fsname=…,tsll=none".)
    func testAMistypedOptionIsNamedWithASuggestion() throws {
        let fixture = try mountable()
        let typo = try mount(fixture, "tsll=none")
        XCTAssertEqual(typo.status, 2, typo.stderr)
        XCTAssertTrue(typo.stderr.hasPrefix("asicfs: unknown mount option 'tsll=none'; did you mean 'tsl'?"), typo.stderr)
        XCTAssertFalse(typo.stderr.contains("fsname="), typo.stderr)
        XCTAssertFalse(typo.stderr.contains("fuse:"), typo.stderr)
        let option = try mount(fixture, "allow_othr")
        XCTAssertEqual(option.status, 2, option.stderr)
        XCTAssertTrue(option.stderr.hasPrefix("asicfs: unknown mount option 'allow_othr'; did you mean 'allow_other'?"), option.stderr)
        XCTAssertFalse(fixture.isMounted)

        // What libfuse takes still passes through.
        try fixture.mount(["noatime", "kernel_cache"])
        XCTAssertEqual(try readFile(fixture.path("a.txt")), Array("alpha\n".utf8))
        try fixture.unmount()
    }

    /// (Before: mounted; the missing trusted list showed only at the first validation.)
    func testATrustedListThatIsNotThereIsRefusedBeforeMounting() throws {
        let fixture = try mountable()
        let bogus = try mount(fixture, "tsl=bogus")
        XCTAssertEqual(bogus.status, 2, bogus.stderr)
        XCTAssertTrue(bogus.stderr.hasPrefix("asicfs: setting tsl: \(fixture.folder)/bogus does not exist (tsl takes a file, an http(s) URL, test or none)"),
                      bogus.stderr)
        let typo = try mount(fixture, "tsl=tset")
        XCTAssertEqual(typo.status, 2, typo.stderr)
        XCTAssertTrue(typo.stderr.contains("; did you mean 'test'?"), typo.stderr)
        XCTAssertFalse(fixture.isMounted)
    }

    /// `-o create` takes an empty file (`touch x.asice`) as `asicfs create` does. (Before: "not a
    /// valid ZIP file: the file is empty (0 bytes)", exit status 1.)
    func testCreateMakesAContainerOfAnEmptyFileAsCreateDoes() throws {
        let fixture = try MountFixture(self)
        try writeFile([], fixture.container)
        try fixture.mount(["create"])
        try writeFile(Array("new\n".utf8), fixture.path("n.txt"))
        try fixture.unmount()
        XCTAssertEqual(try containerContents(fixture.container)["n.txt"], Array("new\n".utf8))
        let other = try MountFixture(self)
        try writeFile([], other.container)
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", other.container]).status, 0)
        XCTAssertEqual(try containerContents(other.container), [:])
    }

    /// A container on read-only storage (a read-only bind mount), mounted without -o ro: mounted
    /// read-only with a notice, as `asicfs open` does. (Before: exit status 1, "cannot create
    /// …asicfs-spool…: Read-only file system", with no word of -o ro.)
    func testAContainerOnReadOnlyStorageIsMountedReadOnlyWithANotice() throws {
        let fixture = try mountable()
        let readOnly = fixture.folder + "/ro"
        try FileManager.default.createDirectory(atPath: readOnly, withIntermediateDirectories: true)
        XCTAssertEqual(try Shell.run("/usr/bin/mount", ["--bind", fixture.folder, readOnly]).status, 0)
        addTeardownBlock { _ = try? Shell.run("/usr/bin/umount", ["-l", readOnly]) }
        let remounted = try Shell.run("/usr/bin/mount", ["-o", "remount,bind,ro", readOnly])
        XCTAssertEqual(remounted.status, 0, remounted.stderr)

        try fixture.mount(container: readOnly + "/container.asice")
        XCTAssertTrue(fixture.stderrText.contains("\(readOnly)/container.asice cannot be written (Read-only file system): "
            + "mounting it read-only (-o ro)"), fixture.stderrText)
        XCTAssertEqual(try readFile(fixture.path("a.txt")), Array("alpha\n".utf8))
        let write = try Shell.run("/bin/sh", ["-c", "echo x > '\(fixture.path("b.txt"))'"])
        XCTAssertTrue(write.stderr.contains("Read-only file system"), write.stderr)
        let state = try String(contentsOfFile: fixture.path(".asicfs/container"), encoding: .utf8)
        XCTAssertTrue(state.contains("state: read-only"), state)
        try fixture.unmount()
    }
}

import Foundation
import TestTools
import XCTest

/// Issue 29: an open container keeps the folder it was opened in. Its saves, spool folder and
/// rescue at unmount go there, whatever another user (or program) does to the folder's path on
/// disk meanwhile: a folder swapped for a link never gets the daemon's writes.
final class PinnedFolderTests: XCTestCase {
    /// A root `allow_other` browse mount; the other user's folder holds their container. While a
    /// save of a change written through the mount waits (save gate), they rename the folder away
    /// and put a link to a root-only folder in its place. The daemon (root) wrote its rescue of
    /// the unsaved change there at unmount.
    func testABrowseSaveIsNotRedirectedByAFolderSwappedForALink() throws {
        let fixture = try BrowseFixture(self)
        let attacker = try SecondUser.account()
        try fixture.makeContainer("shared/own/c.asice", ["one.txt": "1"])
        XCTAssertEqual(chmod(fixture.mount.folder, 0o755), 0)
        XCTAssertEqual(chmod(fixture.tree, 0o755), 0)
        XCTAssertEqual(chmod(fixture.real("shared"), 0o1777), 0)
        for owned in ["shared/own", "shared/own/c.asice"] {
            XCTAssertEqual(chown(fixture.real(owned), attacker.uid, attacker.gid), 0)
        }
        let rootOnly = fixture.mount.folder + "/root-only"
        try FileManager.default.createDirectory(atPath: rootOnly, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(rootOnly, 0o700), 0)
        let gate = SaveGate(in: fixture.mount.folder, self)
        try fixture.start(["allow_other"], environment: gate.environment)

        try gate.hold()
        try put("two", fixture.path("shared/own/c.asice/two.txt"))
        gate.waitForAHeldSave()
        let swap = try attacker.sh("mv \"$1\" \"$1.old\" && ln -s \"$2\" \"$1\"", [fixture.real("shared/own"), rootOnly])
        XCTAssertEqual(swap.status, 0, swap.stderr)
        gate.release()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: rootOnly), [])
        XCTAssertNoThrow(try fixture.mount.unmount())

        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: rootOnly), [],
                       "nothing is written in the folder the link points to")
        let saved = try containerContents(fixture.real("shared/own.old/c.asice"))
        XCTAssertEqual(saved["two.txt"], Array("two".utf8), "the change is saved in the container's own folder")
        XCTAssertEqual(saved["one.txt"], Array("1".utf8))
        XCTAssertTrue(fixture.mount.stderrText.contains("was moved or replaced on disk"), fixture.mount.stderrText)
    }

    /// A single mount: the container's folder is renamed away on disk and a new folder made
    /// under its old name while a save waits. The save goes to the container where it is now,
    /// and nothing lands in the new folder.
    func testASingleMountSavesIntoTheFolderItWasOpenedInAfterThatFolderIsRenamed() throws {
        let fixture = try MountFixture(self)
        let box = fixture.folder + "/box"
        try FileManager.default.createDirectory(atPath: box, withIntermediateDirectories: true)
        try writeFile(Array("1".utf8), fixture.folder + "/one.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", box + "/c.asice", fixture.folder + "/one.txt"]).status, 0)
        let gate = SaveGate(in: fixture.folder, self)
        try fixture.mount(container: box + "/c.asice", environment: gate.environment)

        try gate.hold()
        try put("two", fixture.path("two.txt"))
        gate.waitForAHeldSave()
        XCTAssertEqual(rename(box, box + ".old"), 0)
        try FileManager.default.createDirectory(atPath: box, withIntermediateDirectories: true)
        gate.release()
        XCTAssertNoThrow(try fixture.unmount())

        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: box), [], "nothing is written in the new folder")
        XCTAssertEqual(try containerContents(box + ".old/c.asice")["two.txt"], Array("two".utf8))
    }

    /// Issue 29 item 18: a folder renamed on disk while one of its containers has a file open
    /// for writing. Under its new name the container is busy (EBUSY) while the old one is open
    /// here; once that file closes, the change is saved into the container where it now is, the
    /// container is let go when idle and opens under the new name with the change. (Before,
    /// its save went by the old path and failed for the rest of the session.)
    func testAContainerWhoseFolderIsRenamedOnDiskKeepsItsWorkAndOpensUnderTheNewName() throws {
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("u/c.asice", ["one.txt": "1"])
        let log = fixture.mount.folder + "/released.log"
        try fixture.start([], environment: ["ASICFS_TEST_RELEASE_LOG": log])
        let gate = fixture.mount.folder + "/writer-gate"
        try writeFile([], gate)
        addTeardownBlock { unlink(gate) }
        let writer = try Shell.spawn("/bin/sh", ["-c", "exec 3> \"$1\"; printf new >&3; touch \"$2.held\"; while [ -e \"$2\" ]; do sleep 0.05; done",
                                                 "sh", fixture.path("u/c.asice/new.txt"), gate], stdout: "/dev/null", stderr: "/dev/null")
        XCTAssertTrue(eventually(10) { access(gate + ".held", F_OK) == 0 }, "the writer has written")
        XCTAssertEqual(rename(fixture.real("u"), fixture.real("u2")), 0)

        let busy = try Shell.run("/bin/ls", [fixture.path("u2/c.asice/")])
        XCTAssertTrue(busy.stderr.contains("Device or resource busy"), busy.stdout + busy.stderr)
        unlink(gate)
        XCTAssertEqual(Shell.wait(writer), 0)
        XCTAssertTrue(eventually(20) {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").contains("u/c.asice")
        }, "the container under its old name was let go")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.path("u2/c.asice")).sorted(),
                       [".asicfs", "new.txt", "one.txt"])
        XCTAssertEqual(try readFile(fixture.path("u2/c.asice/new.txt")), Array("new".utf8))
        XCTAssertNoThrow(try fixture.mount.unmount())
        XCTAssertEqual(try containerContents(fixture.real("u2/c.asice"))["new.txt"], Array("new".utf8))
    }

    /// Writes `text` as a program would, without fsync (which would wait for the held save).
    private func put(_ text: String, _ path: String) throws {
        XCTAssertEqual(try Shell.run("/bin/sh", ["-c", "printf %s \"$1\" > \"$2\"", "sh", text, path]).status, 0)
    }
}

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
        let attacker = try OtherUser.ensure("asicfs-test2")
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

    /// Writes `text` as a program would, without fsync (which would wait for the held save).
    private func put(_ text: String, _ path: String) throws {
        XCTAssertEqual(try Shell.run("/bin/sh", ["-c", "printf %s \"$1\" > \"$2\"", "sh", text, path]).status, 0)
    }
}

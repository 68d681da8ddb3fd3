import TestTools
import XCTest

/// Changes made while a save runs, and files removed while open. The save's window is held open
/// with the daemon's test hook (ASICFS_TEST_HOLD_SAVES), not with sleeps: the save has taken
/// the view it writes and waits until the test has made its change.
final class MountSaveRaceTests: XCTestCase {
    private var gate: SaveGate!

    private func newMount(files: [String: [UInt8]] = ["a.txt": Array("alpha\n".utf8)]) throws -> MountFixture {
        let fixture = try MountFixture(self)
        var paths: [String] = []
        for (name, bytes) in files.sorted(by: { $0.key < $1.key }) {
            try writeFile(bytes, fixture.folder + "/" + name)
            paths.append(fixture.folder + "/" + name)
        }
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container] + paths).status, 0)
        gate = SaveGate(in: fixture.folder, self)
        try fixture.mount(environment: gate.environment)
        return fixture
    }

    /// Writes through the shell: Foundation's writes fsync, which would wait for the held save.
    private func put(_ text: String, _ path: String) throws {
        XCTAssertEqual(try Shell.run("/bin/sh", ["-c", "printf %s \"$1\" > \"$2\"", "sh", text, path]).status, 0)
    }

    private func fsync(_ path: String) throws -> Shell.Output {
        try Shell.python("import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)", [path])
    }

    /// `cp` a file in, `rm` it while the auto-save that writes it runs: the removal survives
    /// that save (it was undone: the container kept the file the mount no longer showed).
    func testARemovalDuringTheSaveOfThatFileSurvivesTheSave() throws {
        let fixture = try newMount()
        try gate.hold()
        try writeFile(textLikeBytes(count: 3 << 20), fixture.folder + "/big.txt")
        XCTAssertEqual(try Shell.run("cp", [fixture.folder + "/big.txt", fixture.path("big.txt")]).status, 0)
        gate.waitForAHeldSave()  // the auto-save took big.txt into its layout
        XCTAssertEqual(unlink(fixture.path("big.txt")), 0)
        gate.release()
        XCTAssertEqual(try fixture.mountpointListing(), ["a.txt"])
        try fixture.unmount()
        XCTAssertEqual(Set(try containerContents(fixture.container).keys), ["a.txt"])
    }

    /// Every kind of change made during a save is in the next one: a write, a touch, a rename.
    func testChangesMadeDuringASaveAreSavedNext() throws {
        let fixture = try newMount(files: ["a.txt": Array("alpha\n".utf8), "b.txt": Array("bravo\n".utf8)])
        try gate.hold()
        try put("charlie\n", fixture.path("c.txt"))
        gate.waitForAHeldSave()
        try put("alpha two\n", fixture.path("a.txt"))
        XCTAssertEqual(try Shell.run("touch", ["-d", "2021-01-01 00:00:00 UTC", fixture.path("b.txt")]).status, 0)
        XCTAssertEqual(rename(fixture.path("c.txt"), fixture.path("d.txt")), 0)
        gate.release()
        try fixture.unmount()
        let saved = try containerContents(fixture.container)
        XCTAssertEqual(Set(saved.keys), ["a.txt", "b.txt", "d.txt"])
        XCTAssertEqual(saved["a.txt"], Array("alpha two\n".utf8))
        XCTAssertEqual(saved["d.txt"], Array("charlie\n".utf8))
        let listing = try Shell.run(MountFixture.binary, ["ls", "--json", fixture.container])
        XCTAssertTrue(listing.stdout.contains("2021-01-01T00:00:00"), listing.stdout)
    }

    /// A rename while a save rewrites the container (a removal forces the rewrite): the view
    /// must point into the new file. It kept the old offsets under the new name, so every
    /// later save failed ("the local header of 'b.txt' is truncated"), fsync gave EIO and the
    /// rename was lost.
    func testARenameDuringARewriteKeepsTheMountWorking() throws {
        let bravo = textLikeBytes(count: 300 << 10, seed: 3)
        let fixture = try newMount(files: ["a.txt": Array("alpha\n".utf8), "b.txt": bravo,
                                           "0.txt": textLikeBytes(count: 200 << 10, seed: 5)])
        try gate.hold()
        // The save must rewrite, and move b.txt: 0.txt, before it in the file, goes.
        XCTAssertEqual(unlink(fixture.path("0.txt")), 0)
        gate.waitForAHeldSave()
        XCTAssertEqual(rename(fixture.path("b.txt"), fixture.path("renamed.txt")), 0)
        gate.release()

        XCTAssertEqual(try readFile(fixture.path("renamed.txt")), bravo)
        try writeFile(Array("echo\n".utf8), fixture.path("e.txt"))
        let synced = try fsync(fixture.path("e.txt"))
        XCTAssertEqual(synced.status, 0, "fsync after the save: \(synced.stderr)")
        var saved = try containerContents(fixture.container)
        XCTAssertEqual(Set(saved.keys), ["a.txt", "renamed.txt", "e.txt"])
        XCTAssertEqual(saved["renamed.txt"], bravo)
        let lastError = try String(contentsOfFile: fixture.path(".asicfs/status/last-error"), encoding: .utf8)
        XCTAssertFalse(lastError.contains("saving"), lastError)

        XCTAssertEqual(rename(fixture.path("renamed.txt"), fixture.path("final.txt")), 0)
        try fixture.unmount()
        saved = try containerContents(fixture.container)
        XCTAssertEqual(Set(saved.keys), ["a.txt", "final.txt", "e.txt"])
        XCTAssertEqual(saved["final.txt"], bravo)
    }

    /// `rm` of a file another program still has open: it is gone from the mount and from every
    /// save at once (libfuse renamed it to `.fuse_hidden…`, a data file the next save wrote),
    /// while the open descriptor still reads its bytes.
    func testAFileRemovedWhileOpenIsNeverSaved() throws {
        let secret = textLikeBytes(count: 200 << 10, seed: 9)
        let fixture = try newMount(files: ["a.txt": Array("alpha\n".utf8), "secret.txt": secret])
        let reader = try XCTUnwrap(FileHandle(forReadingAtPath: fixture.path("secret.txt")))
        let writerFD = open(fixture.path("draft.txt"), O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(writerFD, 0)
        XCTAssertEqual(write(writerFD, "draft", 5), 5)
        XCTAssertEqual(unlink(fixture.path("secret.txt")), 0)
        XCTAssertEqual(unlink(fixture.path("draft.txt")), 0)
        XCTAssertEqual(try fixture.mountpointListing(), ["a.txt"], "nothing hidden is shown")

        // The open descriptors still work: read, fstat, write, ftruncate.
        XCTAssertEqual([UInt8](reader.readData(ofLength: 1 << 20)), secret)
        var st = stat()
        XCTAssertEqual(fstat(reader.fileDescriptor, &st), 0)
        XCTAssertEqual(st.st_size, off_t(secret.count))
        XCTAssertEqual(write(writerFD, " more", 5), 5)
        XCTAssertEqual(ftruncate(writerFD, 3), 0)
        XCTAssertEqual(fstat(writerFD, &st), 0)
        XCTAssertEqual(st.st_size, 3)

        // A save while they are open writes neither.
        try writeFile(Array("bravo\n".utf8), fixture.path("b.txt"))
        XCTAssertEqual(try fsync(fixture.path("b.txt")).status, 0)
        XCTAssertEqual(Set(try containerContents(fixture.container).keys), ["a.txt", "b.txt"])
        try reader.close()
        close(writerFD)
        try fixture.unmount()
        XCTAssertEqual(Set(try containerContents(fixture.container).keys), ["a.txt", "b.txt"])
    }
}

extension MountFixture {
    /// The names at the top of the mount, without the control folder, sorted.
    func mountpointListing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: mountpoint).filter { $0 != ".asicfs" }.sorted()
    }
}

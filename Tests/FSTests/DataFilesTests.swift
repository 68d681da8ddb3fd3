import ASiC
import Foundation
@testable import FS
import TestTools
import XCTest

/// The data files of a mount, driven directly through the part API (`MountPart`), without FUSE:
/// what a kernel request would do, in-process, with the container checked afterwards by an
/// independent reader (Python's zipfile).
final class DataFilesTests: XCTestCase {
    private func unsigned(_ fixture: PartFixture, _ files: [(String, String)]) throws {
        try TestContainers.unsigned(fixture.container, files: files.map { ($0.0, Data($0.1.utf8)) })
    }

    func testCreateWriteReadRenameUnlinkAndCommit() throws {
        let fixture = try PartFixture(self)
        try unsigned(fixture, [("a.txt", "first\n"), ("docs/b.txt", "second\n")])
        try fixture.open()
        let data = fixture.data

        XCTAssertEqual(try data.list(""), ["a.txt", "docs"])
        XCTAssertEqual(try data.list("docs"), ["b.txt"])
        XCTAssertEqual(try contents(data, "a.txt"), Array("first\n".utf8))
        XCTAssertEqual(try data.attributes("docs").kind, .directory)
        XCTAssertEqual(try data.attributes("a.txt").permissions, 0o644)

        let created = try data.create("new.txt", writeOnly: false)
        try write(data, created.file, Array("hello ".utf8))
        try write(data, created.file, Array("world\n".utf8), at: 6)
        XCTAssertEqual(try readAll(data, created.file), Array("hello world\n".utf8), "a file being written reads back")
        data.release(created.file)

        // An append to a stored file: its bytes are copied into a spool first.
        let appended = try data.open("a.txt", flags: O_WRONLY | O_APPEND)
        try write(data, appended.file, Array("more\n".utf8), at: 6)
        data.release(appended.file)

        try data.rename("docs/b.txt", to: "b.txt", flags: [])
        XCTAssertEqual(try data.list("").sorted(), ["a.txt", "b.txt", "docs", "new.txt"], "the emptied folder stays, as on any filesystem")
        XCTAssertEqual(errnoOf { try data.rename("b.txt", to: "a.txt", flags: .noReplace) }, EEXIST)
        XCTAssertEqual(errnoOf { try data.rename("b.txt", to: "a.txt", flags: .exchange) }, EINVAL)

        try data.commit()
        XCTAssertEqual(try containerContents(fixture.container),
                       ["a.txt": Array("first\nmore\n".utf8), "b.txt": Array("second\n".utf8), "new.txt": Array("hello world\n".utf8)])

        try data.unlink("b.txt")
        XCTAssertEqual(errnoOf { try data.unlink("b.txt") }, ENOENT)
        XCTAssertEqual(errnoOf { try data.unlink("docs") }, EISDIR)
        try data.removeFolder("docs")
        try data.makeFolder("later")
        XCTAssertEqual(errnoOf { try data.makeFolder(".Trash") }, EPERM, "a container keeps no trash folder")
        XCTAssertNil(fixture.router.close())
        XCTAssertEqual(try containerContents(fixture.container), ["a.txt": Array("first\nmore\n".utf8), "new.txt": Array("hello world\n".utf8)])
        XCTAssertEqual(fixture.besideContainer, [], "the spool folder is gone after a clean close")
    }

    /// A file still open for writing when the mount closes is never lost: it is moved into a
    /// rescue folder beside the container, and the close says where.
    func testAFileStillOpenForWritingAtCloseIsRescued() throws {
        let fixture = try PartFixture(self)
        try unsigned(fixture, [("a.txt", "first\n")])
        try fixture.open()
        let data = fixture.data
        let open = try data.create("unfinished.txt", writeOnly: true)
        try write(data, open.file, Array("not done yet\n".utf8))

        let message = try XCTUnwrap(fixture.router.close(), "a close with a file open for writing must say so")
        XCTAssertTrue(message.contains("still open for writing"), message)
        let rescue = try XCTUnwrap(fixture.besideContainer.first { $0.contains(".asicfs-unsaved-") }, "\(fixture.besideContainer)")
        XCTAssertTrue(message.contains(rescue), message)
        XCTAssertEqual(try readFile(fixture.folder + "/" + rescue + "/unfinished.txt"), Array("not done yet\n".utf8))
        XCTAssertEqual(try containerContents(fixture.container), ["a.txt": Array("first\n".utf8)], "the container is left as it was")
    }

    func testAReadOnlyContainerRefusesEveryChangeWithEROFS() throws {
        let fixture = try PartFixture(self)
        try unsigned(fixture, [("a.txt", "first\n")])
        try fixture.open(readOnly: true)
        let data = fixture.data

        XCTAssertEqual(try contents(data, "a.txt"), Array("first\n".utf8))
        XCTAssertEqual(try data.attributes("a.txt").permissions, 0o444)
        XCTAssertEqual(try data.attributes("").permissions, 0o555)
        XCTAssertEqual(errnoOf { _ = try data.create("b.txt", writeOnly: false) }, EROFS)
        XCTAssertEqual(errnoOf { _ = try data.open("a.txt", flags: O_RDWR) }, EROFS)
        XCTAssertEqual(errnoOf { try data.unlink("a.txt") }, EROFS)
        XCTAssertEqual(errnoOf { try data.rename("a.txt", to: "b.txt", flags: []) }, EROFS)
        XCTAssertEqual(errnoOf { try data.makeFolder("sub") }, EROFS)
        XCTAssertEqual(errnoOf { try data.setModified("a.txt", to: nil) }, EROFS)
        XCTAssertEqual(fixture.router.errors.text, "cannot change the time of 'a.txt': the container is mounted read-only (-o ro)")
        XCTAssertEqual(fixture.besideContainer, [], "a read-only mount makes no spool folder")
        XCTAssertNil(fixture.router.close())
        XCTAssertEqual(try containerContents(fixture.container), ["a.txt": Array("first\n".utf8)])
    }

    /// The container core's rule (`DataFileFreeze`) is what the mount answers with: an ASiC-S
    /// container's data file is time-stamped and cannot change.
    func testAnASiCSContainerIsFrozenByTheContainerCoresRule() throws {
        let fixture = try PartFixture(self)
        try TestContainers.asics(fixture.container, [("test1.txt", Array("1234\n".utf8))])
        try fixture.open()
        let data = fixture.data
        let container = try Container.open(fixture.container)
        let freeze = try XCTUnwrap(DataFileFreeze.of(container))
        XCTAssertEqual(freeze, .asicS)

        XCTAssertEqual(errnoOf { _ = try data.create("b.txt", writeOnly: false) }, freeze.code)
        XCTAssertEqual(fixture.router.errors.text, freeze.refusing("create 'b.txt'"))
        XCTAssertEqual(errnoOf { try data.unlink("test1.txt") }, EPERM)
        // The command line's edit refuses it by the same rule, in its own words.
        var edit = container.edit()
        XCTAssertThrowsError(try edit.remove("test1.txt")) { error in
            XCTAssertEqual(error as? ContainerError, .refused(freeze.reason))
        }
    }

    /// While something holds the mount's claim (a signing), data files cannot change (EBUSY,
    /// saying what holds it); once it is released they can.
    func testAClaimKeepsTheDataFilesStillUntilItIsReleased() throws {
        let fixture = try PartFixture(self)
        try unsigned(fixture, [("a.txt", "first\n")])
        try fixture.open()
        let data = fixture.data
        let claim = fixture.router.claim

        try claim.claim("a test signing is running", for: "start a test signing")
        XCTAssertEqual(errnoOf { try claim.claim("another", for: "start another") }, EBUSY)
        XCTAssertEqual(errnoOf { _ = try data.create("b.txt", writeOnly: false) }, EBUSY)
        XCTAssertEqual(fixture.router.errors.text,
                       "cannot create 'b.txt': a test signing is running; data files cannot change until it ends (see .asicfs/status/current)")
        XCTAssertEqual(errnoOf { try data.unlink("a.txt") }, EBUSY)
        XCTAssertEqual(try contents(data, "a.txt"), Array("first\n".utf8), "reading goes on")
        XCTAssertTrue(String(decoding: try contents(fixture.control, "container"), as: UTF8.self)
            .contains("state: unsigned, but a test signing is running: data files cannot change until it ends"))

        // The snapshot a signing gets has the pending changes committed first.
        claim.release(adopting: nil)
        let created = try data.create("b.txt", writeOnly: true)
        try write(data, created.file, Array("second\n".utf8))
        data.release(created.file)
        try claim.claim("a test signing is running", for: "start a test signing")
        XCTAssertEqual(try claim.snapshot().dataFiles.map(\.name), ["a.txt", "b.txt"])
        XCTAssertEqual(try containerContents(fixture.container), ["a.txt": Array("first\n".utf8), "b.txt": Array("second\n".utf8)])
        claim.release(adopting: nil)
        try data.unlink("a.txt")
    }

    /// A spool's I/O has a lock of its own: while a write to one file holds it (held here by
    /// the test, as a slow disk would), the tree lists with attributes, the file being written
    /// and another file are stat'ed and read, another file is written, and a save runs. Done on
    /// another thread with a deadline: whatever waits for the held lock fails the test.
    func testNothingWaitsForAnotherFilesSpoolIO() throws {
        let fixture = try PartFixture(self)
        try unsigned(fixture, [("a.txt", "first\n"), ("small.txt", "small\n")])
        try fixture.open()
        let data = fixture.data
        let slow = try data.create("slow.bin", writeOnly: false)
        try write(data, slow.file, Array(repeating: 7, count: 100_000))
        guard case .spooled(let spool) = (slow.file as! DataFiles.OpenFile).source else { return XCTFail("not a spool") }

        spool.ioLock.lock()
        let finished = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: Error?
        DispatchQueue.global().async {
            do {
                let listed = try fixture.router.listWithAttributes("/")
                XCTAssertEqual(listed.map(\.0).sorted(), [".asicfs", "a.txt", "slow.bin", "small.txt"])
                XCTAssertEqual(listed.first { $0.0 == "slow.bin" }?.1.size, 100_000)
                XCTAssertEqual(try contents(data, "small.txt"), Array("small\n".utf8))
                let other = try data.create("other.txt", writeOnly: true)
                try write(data, other.file, Array("other\n".utf8))
                data.release(other.file)
                try data.commit()
            } catch { failure = error }
            finished.signal()
        }
        let answered = finished.wait(timeout: .now() + 20) == .success
        spool.ioLock.unlock()
        XCTAssertTrue(answered, "the mount waited for another file's spool I/O")
        if !answered { finished.wait() }
        XCTAssertNil(failure)
        XCTAssertEqual(try containerContents(fixture.container)["other.txt"], Array("other\n".utf8))
        XCTAssertNil(try containerContents(fixture.container)["slow.bin"], "a file still open for writing is not saved yet")
        data.release(slow.file)
        try data.commit()
        XCTAssertEqual(try containerContents(fixture.container)["slow.bin"], Array(repeating: 7, count: 100_000))
    }
}

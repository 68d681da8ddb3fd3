import Foundation
import TestTools
import XCTest

/// Trash and editor temporaries never enter a container: `gio trash` is refused (no trash folder
/// inside a container), and new files named like `report.csv~` or `.report.csv.swp` live only in
/// the mount; entries the container has and data files renamed to such names are kept.
final class TransientNameTests: XCTestCase {
    func mounted(_ options: [String] = []) throws -> MountFixture {
        let fixture = try MountFixture(self)
        try writeFile(Array("old text\n".utf8), fixture.folder + "/report.csv")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/report.csv"]).status, 0)
        try fixture.mount(options)
        return fixture
    }

    /// Writes through the mount with a program that has closed the file when it returns (as an
    /// editor does; Foundation's Data.write may keep its descriptor open a while longer).
    func put(_ text: String, _ path: String) throws {
        let written = try Shell.python("import sys; open(sys.argv[1], 'w').write(sys.argv[2])", [path, text])
        XCTAssertEqual(written.status, 0, written.stderr)
    }

    func testTrashIsRefusedAndTheContainerStaysAsItWas() throws {
        let fixture = try mounted()
        let before = try readFile(fixture.container)
        let trashed = try Shell.run("/usr/bin/gio", ["trash", fixture.path("report.csv")])
        XCTAssertNotEqual(trashed.status, 0, "gio trash must not succeed inside a container: \(trashed.stdout)")
        for name in [".Trash", ".Trash-0", ".Trash-1000"] {
            XCTAssertEqual(mkdir(fixture.path(name), 0o700), -1, name)
            XCTAssertEqual(errno, EPERM, name)
        }
        XCTAssertTrue(try String(contentsOfFile: fixture.path(".asicfs/status/last-error"), encoding: .utf8)
            .contains("a container keeps no trash folder"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.mountpoint).sorted(), [".asicfs", "report.csv"])
        try fixture.unmount()
        XCTAssertEqual(try readFile(fixture.container), before)
    }

    func testAnEditorSavingThroughATemporaryLeavesOnlyTheNewFile() throws {
        let fixture = try mounted()
        // gedit/gio: the new text into .goutputstream-*, the old file kept as a backup, then the rename.
        try put("new text\n", fixture.path(".goutputstream-4XZ1Q2"))
        XCTAssertEqual(rename(fixture.path("report.csv"), fixture.path("report.csv~")), 0)
        XCTAssertEqual(rename(fixture.path(".goutputstream-4XZ1Q2"), fixture.path("report.csv")), 0)
        // vim and LibreOffice leave these while a file is open.
        for name in [".report.csv.swp", ".~lock.report.csv#", ".DS_Store", "Thumbs.db", "desktop.ini", "._report.csv", "#report.csv#"] {
            try put("temporary\n", fixture.path(name))
        }
        XCTAssertEqual(Shell.wait(try Shell.spawn("/bin/sync", [fixture.path("report.csv")], stdout: "/dev/null", stderr: "/dev/null")), 0)
        XCTAssertEqual(try Shell.python("import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)", [fixture.path("report.csv")]).status, 0)
        // They are there while mounted, the backup with the old text.
        XCTAssertEqual(try readFile(fixture.path("report.csv~")), Array("old text\n".utf8))
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: fixture.mountpoint).contains(".report.csv.swp"))
        // The backup was a data file renamed (not a temporary made here): it is saved, under its new name.
        XCTAssertEqual(try containerContents(fixture.container),
                       ["report.csv": Array("new text\n".utf8), "report.csv~": Array("old text\n".utf8)], "saved without the temporaries")
        // A backup read after the container was rewritten still has its bytes.
        XCTAssertEqual(try readFile(fixture.path("report.csv~")), Array("old text\n".utf8))
        // Renamed to a normal name, a temporary becomes a data file.
        XCTAssertEqual(rename(fixture.path("report.csv~"), fixture.path("report-old.csv")), 0)
        try fixture.unmount()
        XCTAssertEqual(try containerContents(fixture.container),
                       ["report.csv": Array("new text\n".utf8), "report-old.csv": Array("old text\n".utf8)])
    }

    /// Names that look temporary, made elsewhere: a container holding them keeps every one when
    /// another change is saved, and a data file renamed to such a name (vim's backup step) is
    /// saved under that name. Only a new file made here under such a name stays out.
    func testEntriesTheContainerHasAndDataFilesRenamedToTemporaryNamesAreKept() throws {
        let fixture = try MountFixture(self)
        let expected = try makeContainerWithTemporaryLookingNames(fixture.container, in: fixture.folder)
        try fixture.mount()
        try put("new\n", fixture.path("new.txt"))
        try put("temporary\n", fixture.path("new.txt.swp"))
        XCTAssertEqual(rename(fixture.path("report.csv"), fixture.path("report.csv~")), 0)
        try fixture.unmount()
        var wanted = expected
        wanted["report.csv~"] = wanted.removeValue(forKey: "report.csv")
        wanted["new.txt"] = Array("new\n".utf8)
        XCTAssertEqual(try containerContents(fixture.container), wanted)
    }

    /// The same in a browse mount: one `rm` of another file leaves every one of them.
    func testBrowseModeKeepsEntriesWithTemporaryLookingNames() throws {
        let browse = try BrowseFixture(self)
        let expected = try makeContainerWithTemporaryLookingNames(browse.real("made-elsewhere.asice"), in: browse.mount.folder)
        try browse.start()
        XCTAssertEqual(unlink(browse.path("made-elsewhere.asice/report.csv")), 0)
        try browse.mount.unmount()
        var wanted = expected
        wanted["report.csv"] = nil
        XCTAssertEqual(try containerContents(browse.real("made-elsewhere.asice")), wanted)
    }

    /// A container made by `asicfs create` whose data files have names that look like editor and
    /// desktop temporaries, and `report.csv`; returns its contents.
    func makeContainerWithTemporaryLookingNames(_ container: String, in folder: String) throws -> [String: [UInt8]] {
        let sources = folder + "/made-elsewhere"
        try FileManager.default.createDirectory(atPath: sources, withIntermediateDirectories: true)
        var contents: [String: [UInt8]] = [:]
        for name in ["notes.txt~", ".DS_Store", "Thumbs.db", "desktop.ini", "#draft#", ".#lock", "a.swp", "._meta", ".nfs1", "report.csv"] {
            contents[name] = Array("the content of \(name)\n".utf8)
            try writeFile(contents[name]!, sources + "/" + name)
        }
        let created = try Shell.run(MountFixture.binary, ["create", "-q", container] + contents.keys.sorted().map { sources + "/" + $0 })
        XCTAssertEqual(created.status, 0, created.stderr)
        XCTAssertEqual(try containerContents(container), contents)
        return contents
    }

    func testOnlyTransientChangesLeaveTheContainerFileUntouched() throws {
        let fixture = try mounted()
        var before = stat()
        XCTAssertEqual(stat(fixture.container, &before), 0)
        try put("x", fixture.path(".report.csv.swp"))
        XCTAssertEqual(try Shell.python("import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)", [fixture.path(".report.csv.swp")]).status, 0)
        try fixture.unmount()
        var after = stat()
        XCTAssertEqual(stat(fixture.container, &after), 0)
        XCTAssertEqual(after.st_ino, before.st_ino)
        XCTAssertEqual(after.st_mtim.tv_sec, before.st_mtim.tv_sec)
        XCTAssertEqual(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec)
    }

    func testTheListIsASetting() throws {
        let fixture = try mounted(["transient-names=*.tmp"])
        try put("kept\n", fixture.path("notes~"))
        try put("dropped\n", fixture.path("scratch.tmp"))
        try fixture.unmount()
        XCTAssertEqual(Set(try containerContents(fixture.container).keys), ["report.csv", "notes~"])
        let none = try mounted(["transient-names=none"])
        try put("kept\n", none.path(".DS_Store"))
        try none.unmount()
        XCTAssertEqual(Set(try containerContents(none.container).keys), ["report.csv", ".DS_Store"])
    }
}

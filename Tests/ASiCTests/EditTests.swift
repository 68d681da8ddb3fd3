@testable import ASiC
import Crypto
import TestTools
import XCTest

/// Adding, removing and renaming data files; the rules that refuse a change.
final class EditTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "asic-edit") }
    override class func tearDown() { shared.stop() }
    private var folder = ""

    override func setUpWithError() throws {
        folder = try TestSupport.temporaryFolder(self)
    }

    private func source(_ name: String, _ text: String) throws -> String {
        try TestSupport.write(Array(text.utf8), to: folder + "/" + name)
    }

    private func contents(_ container: Container, _ name: String) throws -> String {
        var bytes: [UInt8] = []
        try container.read(name) { bytes += $0 }
        return String(decoding: bytes, as: UTF8.self)
    }

    func testAddRemoveRenameAndReplace() throws {
        let path = folder + "/doc.asice"
        try Container.create(at: path, files: [NewDataFile(sourcePath: try source("a.txt", "alpha"))])
        var edit = try Container.open(path).edit()
        try edit.add(NewDataFile(sourcePath: try source("b.txt", "bravo")))
        try edit.add(NewDataFile(sourcePath: try source("c.pdf", "%PDF charlie"), name: "sub/c.pdf"))
        var container = try edit.save()
        XCTAssertEqual(container.dataFiles.map(\.name), ["a.txt", "b.txt", "sub/c.pdf"])
        XCTAssertEqual(container.dataFile(named: "sub/c.pdf")?.mediaType, "application/pdf")

        edit = container.edit()
        try edit.rename("a.txt", to: "renamed.txt")
        try edit.remove("b.txt")
        container = try edit.save()
        XCTAssertEqual(container.dataFiles.map(\.name), ["renamed.txt", "sub/c.pdf"])
        XCTAssertEqual(try contents(container, "renamed.txt"), "alpha")

        edit = container.edit()
        XCTAssertThrowsError(try edit.add(NewDataFile(sourcePath: try source("renamed.txt", "new")))) {
            XCTAssertTrue("\($0)".contains("already exists"), "\($0)")
        }
        try edit.add(NewDataFile(sourcePath: folder + "/renamed.txt"), replacing: true)
        container = try edit.save()
        XCTAssertEqual(try contents(container, "renamed.txt"), "new")
        XCTAssertEqual(try Shell.run("unzip", ["-tq", path]).status, 0)
    }

    /// Many small files from memory are prepared on two threads and written in batches: each
    /// lands whole, in order, deflated or stored as it should be, with its SHA-256 known.
    func testManySmallFilesFromMemoryAreSavedInOrderWithTheirDigests() throws {
        let path = folder + "/many.asice"
        var files: [NewDataFile] = []
        for index in 0..<41 {
            let text = String(repeating: "line \(index) of some text that deflates\n", count: index % 7 + 1)
            files.append(NewDataFile(bytes: Array(text.utf8), name: "f\(index).txt"))
        }
        files.append(NewDataFile(bytes: [], name: "empty.txt"))
        files.append(NewDataFile(bytes: Array(repeating: 7, count: 300), name: "photo.JPG"))
        try Container.create(at: path, files: files)
        let container = try Container.open(path)
        XCTAssertEqual(container.dataFiles.map(\.name), files.map(\.name))
        for file in files {
            XCTAssertEqual(try contents(container, file.name), String(decoding: file.bytes!, as: UTF8.self), file.name)
        }
        let byName = Dictionary(uniqueKeysWithValues: container.dataFiles.map { ($0.name, $0.entry) })
        XCTAssertTrue(byName["f6.txt"]!.isDeflated)
        XCTAssertFalse(byName["empty.txt"]!.isDeflated)
        XCTAssertFalse(byName["photo.JPG"]!.isDeflated, "already-compressed names are stored")

        // Added to an existing container the same way, the digests come with the save.
        var edit = container.edit()
        try edit.add(NewDataFile(bytes: Array("late".utf8), name: "late.txt"))
        for index in 0..<20 { try edit.add(NewDataFile(bytes: Array("more \(index)".utf8), name: "more/\(index).txt")) }
        let saved = try edit.save()
        XCTAssertTrue(saved.knowsSHA256(of: "more/19.txt"))
        XCTAssertEqual(try saved.sha256(of: "more/19.txt"), Digest.hash(Array("more 19".utf8)))
        XCTAssertEqual(try contents(try Container.open(path), "more/7.txt"), "more 7")
    }

    func testFileExtensionsAreTheLastNamesInLowerCase() {
        let expected = ["a/b/Report.PDF": "pdf", "archive.tar.GZ": "gz", ".profile": "", "dir.d/.hidden": "",
                        "dir.d/plain": "", "name.": "", "Ünïcode.ÄSICE": "Äsice"]
        for (name, fileExtension) in expected { XCTAssertEqual(MediaType.fileExtension(name), fileExtension, name) }
        XCTAssertEqual(MediaType.guess(forName: "x/Y.Pdf"), "application/pdf")
    }

    func testAddingToSignedContainerFails() throws {
        let path = folder + "/signed.asice"
        try TestContainers.signedShape(path, dataFile: "test.txt")
        let before = try TestSupport.read(path)
        var edit = try Container.open(path).edit()
        XCTAssertThrowsError(try edit.add(NewDataFile(sourcePath: try source("x.txt", "x")))) { error in
            XCTAssertTrue("\(error)".contains("is signed"), "\(error)")
            XCTAssertEqual((error as? ContainerError)?.errno, EPERM)
        }
        XCTAssertThrowsError(try edit.remove("test.txt"))
        XCTAssertThrowsError(try edit.rename("test.txt", to: "other.txt"))
        XCTAssertEqual(try TestSupport.read(path), before)
    }

    func testASiCSContainersCannotBeChanged() throws {
        let path = folder + "/ts.asics"
        let services = try XCTUnwrap(Self.shared.services, "the loopback TSA: \(Self.shared.failure ?? "")")
        let token = try TestContainers.timeStampToken(over: TestContainers.payload, tsaURL: services.tsaURL, in: folder)
        try TestContainers.timeStamped(path, token: token)
        var edit = try Container.open(path).edit()
        XCTAssertThrowsError(try edit.remove("test1.txt")) { XCTAssertTrue("\($0)".contains("ASiC-S"), "\($0)") }
    }

    func testUnsafeOrReservedNamesAreRefused() throws {
        let path = folder + "/doc.asice"
        try Container.create(at: path, files: [NewDataFile(sourcePath: try source("a.txt", "a"), name: "dir/a.txt")])
        var edit = try Container.open(path).edit()
        let src = try source("x.txt", "x")
        let refused: [(String, String)] = [
            ("../x.txt", "'..'"), ("/etc/x", "absolute"), ("a\\b", "'\\'"), ("", "empty"), ("a//b", "empty path segment"),
            ("./x", "'.'"), ("mimetype", "reserved"), ("META-INF/manifest.xml", "reserved"), ("x/", "ends with"),
            ("dir", "already a folder"), ("dir/a.txt/b", "is a file"),
        ]
        for (name, reason) in refused {
            XCTAssertThrowsError(try edit.add(NewDataFile(sourcePath: src, name: name)), name) {
                XCTAssertTrue("\($0)".contains(reason), "\(name): \($0)")
            }
        }
        XCTAssertThrowsError(try edit.rename("dir/a.txt", to: "../escape"))
        XCTAssertThrowsError(try edit.add(NewDataFile(sourcePath: folder))) { XCTAssertTrue("\($0)".contains("not a regular file")) }
        XCTAssertThrowsError(try edit.add(NewDataFile(sourcePath: folder + "/missing"))) {
            XCTAssertTrue("\($0)".contains("No such file"), "\($0)")
        }
    }

    /// The name checks (taken, a folder, inside a file) follow every earlier change of the same edit.
    func testNameChecksFollowRemovesRenamesAndReplacements() throws {
        let path = folder + "/doc.asice"
        let src = try source("x.txt", "x")
        try Container.create(at: path, files: [NewDataFile(sourcePath: src, name: "dir/sub/a.txt"),
                                               NewDataFile(sourcePath: src, name: "dir/b.txt")])
        var edit = try Container.open(path).edit()
        XCTAssertThrowsError(try edit.add(NewDataFile(sourcePath: src, name: "dir/sub"))) {
            XCTAssertTrue("\($0)".contains("already a folder"), "\($0)")
        }
        try edit.remove("dir/sub/a.txt")
        try edit.add(NewDataFile(sourcePath: src, name: "dir/sub"))    // no longer a folder
        XCTAssertThrowsError(try edit.add(NewDataFile(sourcePath: src, name: "dir/sub/c.txt"))) {
            XCTAssertTrue("\($0)".contains("'dir/sub' is a file"), "\($0)")
        }
        try edit.rename("dir/sub", to: "top.txt")
        try edit.add(NewDataFile(sourcePath: src, name: "dir/sub/c.txt"))
        XCTAssertThrowsError(try edit.add(NewDataFile(sourcePath: src, name: "top.txt"))) {
            XCTAssertTrue("\($0)".contains("already exists"), "\($0)")
        }
        try edit.add(NewDataFile(sourcePath: src, name: "top.txt"), replacing: true)
        XCTAssertThrowsError(try edit.rename("dir/b.txt", to: "dir/sub/c.txt")) {
            XCTAssertTrue("\($0)".contains("already exists"), "\($0)")
        }
        try edit.rename("dir/b.txt", to: "dir/sub/b.txt")
        XCTAssertEqual(edit.names, ["dir/sub/b.txt", "dir/sub/c.txt", "top.txt"])  // renames keep their place
        let saved = try edit.save()
        XCTAssertEqual(saved.dataFiles.map(\.name), ["dir/sub/b.txt", "dir/sub/c.txt", "top.txt"])
    }

    /// Adding only appends: every byte before the old manifest stays where it was, and the old
    /// manifest does not pile up (the file grows by about the new entry, not by a manifest per add).
    func testAddingAppendsWithoutRewritingOrGrowingGarbage() throws {
        let path = folder + "/big.asice"
        let big = try TestSupport.write(textLikeBytes(count: 4 << 20), to: folder + "/big.txt")
        var container = try Container.create(at: path, files: [NewDataFile(sourcePath: big)])
        let manifestOffset = Int(container.manifestEntry!.localHeaderOffset)
        let prefix = Array(try TestSupport.read(path).prefix(manifestOffset))
        for i in 0..<20 {
            var edit = container.edit()
            try edit.add(NewDataFile(sourcePath: try source("small\(i).txt", "small file \(i)")))
            container = try edit.save()
        }
        let after = try TestSupport.read(path)
        XCTAssertEqual(Array(after.prefix(manifestOffset)), prefix, "existing entries untouched")
        XCTAssertEqual(container.dataFiles.count, 21)
        let python = try Shell.python("""
            import zipfile, sys
            z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None
            used = sum(30 + len(i.filename.encode()) + len(i.extra) + i.compress_size for i in z.infolist())
            cd = sum(46 + len(i.filename.encode()) + len(i.extra) + len(i.comment) for i in z.infolist())
            import os; print(os.path.getsize(sys.argv[1]) - used - cd - 22)
            """, [path])
        XCTAssertEqual(python.status, 0, python.stderr)
        // Local extra fields are as long as the central ones here, so nothing is unaccounted for.
        XCTAssertEqual(Int(python.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), 0, "no dead bytes")
    }

    func testPermissionsAreKeptAcrossSaves() throws {
        let path = folder + "/mode.asice"
        try Container.create(at: path, files: [])
        chmod(path, 0o640)
        var edit = try Container.open(path).edit()
        try edit.add(NewDataFile(sourcePath: try source("a.txt", "a")))
        try edit.save()
        var st = stat()
        stat(path, &st)
        XCTAssertEqual(st.st_mode & 0o7777, 0o640)
    }

    func testSavingThroughASymlinkReplacesTheTarget() throws {
        let path = folder + "/real.asice"
        try Container.create(at: path, files: [])
        let link = folder + "/link.asice"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        var edit = try Container.open(link).edit()
        try edit.add(NewDataFile(sourcePath: try source("a.txt", "a")))
        try edit.save()
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: link), path, "the link stays a link")
        XCTAssertEqual(try Container.open(path).dataFiles.map(\.name), ["a.txt"])
    }

    func testAnOpenSnapshotStaysReadableAfterASave() throws {
        let path = folder + "/snap.asice"
        let old = try Container.create(at: path, files: [NewDataFile(sourcePath: try source("a.txt", "first"))])
        var edit = old.edit()
        try edit.remove("a.txt")
        try edit.add(NewDataFile(sourcePath: try source("a2.txt", "second"), name: "a.txt"))
        let new = try edit.save()
        XCTAssertEqual(try contents(old, "a.txt"), "first")
        XCTAssertEqual(try contents(new, "a.txt"), "second")
    }
}

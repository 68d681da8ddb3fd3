import Foundation
import TestTools
import XCTest

/// add / remove / create: what is refused, and that a refusal leaves every byte as it was.
final class EditTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "cli-edit") }
    override class func tearDown() { shared.stop() }

    /// A container with one data file, test.txt, signed (LT) with the test PKI.
    @discardableResult
    func signedContainer(_ name: String) throws -> String {
        let services = try XCTUnwrap(Self.shared.services, "the loopback TSA/OCSP services: \(Self.shared.failure ?? "")")
        try SignedTestContainers.make(path(name), files: [("test.txt", Data("signed text\n".utf8))], binary: Self.binary, services: services)
        return path(name)
    }

    // MARK: - Signed containers

    func testAddingToASignedContainerFailsAndLeavesItByteIdentical() throws {
        let signed = try signedContainer("signed copy.asice")
        let before = try read(signed)
        try write("new.txt", "new\n")
        for arguments in [["add", signed, "new.txt"], ["add", signed, "new.txt", "--replace"]] {
            let result = try asicfs(arguments)
            assertFailure(result, mentions: [signed, "is signed", "1 signature file", "would break the signatures"])
            XCTAssertEqual(result.stdout, "")
            XCTAssertEqual(try read(signed), before, "the signed container changed")
        }
        // Replacing its own data file is refused the same way.
        try write("test.txt", "forged\n")
        assertFailure(try asicfs(["add", signed, "test.txt", "--replace"]), mentions: ["is signed"])
        XCTAssertEqual(try read(signed), before)
        XCTAssertEqual(folderContents(work.path), ["new.txt", "signed copy.asice", "test.txt"])
    }

    func testRemovingFromASignedContainerFailsAndLeavesItByteIdentical() throws {
        let signed = try signedContainer("signed.asice")
        let before = try read(signed)
        let result = try asicfs(["remove", signed, "test.txt"])
        assertFailure(result, mentions: [signed, "is signed"])
        XCTAssertEqual(try read(signed), before)
    }

    func testSignedContainerCanStillBeListedAndExtracted() throws {
        let signed = try signedContainer("tsl.asice")
        let listing = try listing(signed)
        XCTAssertEqual(listing["signed"] as? Bool, true)
        XCTAssertEqual(listing["format"] as? String, "ASiC-E")
        let signatures = listing["signatures"] as? [[String: Any]] ?? []
        XCTAssertEqual(signatures.compactMap { $0["file"] as? String }, ["META-INF/signatures0.xml"])
        XCTAssertEqual(dataFiles(of: listing).compactMap { $0["name"] as? String }, ["test.txt"])
        let table = try asicfs(["ls", signed])
        XCTAssertTrue(table.stdout.contains("signed (1 signature file)"), table.stdout)
        XCTAssertTrue(table.stdout.contains("signature: META-INF/signatures0.xml"), table.stdout)
        let out = try asicfs(["extract", signed, "test.txt", "-p"])
        assertSuccess(out)
        XCTAssertEqual(out.stdoutData.count, (dataFiles(of: listing).first?["size"] as? NSNumber)?.intValue)
    }

    /// A container its owner may not write (chmod 444) is refused by add and remove, as zip
    /// refuses such an archive, and is left as it was; --force changes it and keeps its mode.
    /// (Before: rewritten, whatever the mode.)
    func testAWriteProtectedContainerIsRefusedUnlessForced() throws {
        let container = path("c.asice")
        try write("a.txt", "first\n")
        try write("b.txt", "second\n")
        assertSuccess(try asicfs(["create", container, "a.txt"]))
        XCTAssertEqual(chmod(container, 0o444), 0)
        let before = try read(container)
        assertFailure(try asicfs(["add", container, "b.txt"]),
                      mentions: ["write-protected (mode 0444)", "chmod u+w", "--force"])
        assertFailure(try asicfs(["remove", container, "a.txt"]), mentions: ["write-protected (mode 0444)"])
        XCTAssertEqual(try read(container), before)
        assertSuccess(try asicfs(["add", "--force", container, "b.txt"]))
        var status = stat()
        XCTAssertEqual(stat(container, &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o444)
        let listed = try asicfs(["ls", container])
        XCTAssertTrue(listed.stdout.contains("b.txt"), listed.stdout)
    }

    // MARK: - Names

    func testAddingADuplicateNameFailsWithoutReplace() throws {
        let container = path("c.asice")
        try write("a.txt", "first\n")
        assertSuccess(try asicfs(["create", container, "a.txt"]))
        let before = try read(container)
        try write("a.txt", "second\n")
        let result = try asicfs(["add", container, "a.txt"])
        assertFailure(result, mentions: ["'a.txt'", "already exists"])
        XCTAssertEqual(try read(container), before)
        // Twice on one command line: the second is a duplicate of the first.
        try write("b.txt", "b\n")
        assertFailure(try asicfs(["add", container, "b.txt", "b.txt"]), mentions: ["'b.txt'", "already exists"])
        XCTAssertEqual(try read(container), before)
        // The same base name from another folder is the same name.
        try write("sub/a.txt", "third\n")
        assertFailure(try asicfs(["add", container, "sub/a.txt"]), mentions: ["'a.txt'", "already exists"])
        XCTAssertEqual(try read(container), before)
    }

    func testAddWithReplaceReplacesTheContent() throws {
        let container = path("c.asice")
        try write("a.txt", "first\n")
        try write("b.txt", "bee\n")
        assertSuccess(try asicfs(["create", container, "a.txt", "b.txt"]))
        try write("sub/a.txt", "second, longer content\n")
        let result = try asicfs(["add", container, "sub/a.txt", "--replace"])
        assertSuccess(result)
        XCTAssertEqual(result.stderr, "")
        let files = dataFiles(of: try listing(container))
        // The replaced file moves to the end of the list.
        XCTAssertEqual(files.compactMap { $0["name"] as? String }, ["b.txt", "a.txt"])
        XCTAssertEqual(files.first { $0["name"] as? String == "a.txt" }?["size"] as? Int, 23)
        XCTAssertEqual(try asicfs(["extract", container, "a.txt", "-p"]).stdout, "second, longer content\n")
        XCTAssertEqual(try asicfs(["extract", container, "b.txt", "-p"]).stdout, "bee\n")
        // --replace with a new name simply adds.
        try write("c.txt", "sea\n")
        assertSuccess(try asicfs(["add", container, "c.txt", "--replace"]))
        XCTAssertEqual(try dataFileNames(container).sorted(), ["a.txt", "b.txt", "c.txt"])
    }

    func testRemovingAnUnknownNameFailsAndChangesNothing() throws {
        let container = path("c.asice")
        try write("a.txt", "a\n")
        assertSuccess(try asicfs(["create", container, "a.txt"]))
        let before = try read(container)
        for names in [["nope.txt"], ["a.txt", "nope.txt"], ["A.TXT"]] {
            let result = try asicfs(["remove", container] + names)
            assertFailure(result, mentions: [container, "no data file named '\(names.last!)'"])
            XCTAssertEqual(try read(container), before, "\(names)")
        }
        assertFailure(try asicfs(["remove", container, "mimetype"]), mentions: ["no data file named 'mimetype'"])
        assertFailure(try asicfs(["remove", container, "META-INF/manifest.xml"]), mentions: ["no data file named"])
        XCTAssertEqual(try read(container), before)
    }

    func testAddingSomethingThatIsNotAReadableRegularFileFails() throws {
        let container = path("c.asice")
        assertSuccess(try asicfs(["create", container]))
        let before = try read(container)
        try FileManager.default.createDirectory(atPath: path("folder"), withIntermediateDirectories: true)
        assertFailure(try asicfs(["add", container, "folder"]), status: 2, mentions: ["folder is a folder", "give -r"])
        assertFailure(try asicfs(["add", container, "missing.txt"]), mentions: ["missing.txt", "No such file"])
        // Reserved names cannot become data files.
        try write("mimetype", "x")
        assertFailure(try asicfs(["add", container, "mimetype"]), mentions: ["'mimetype'", "reserved"])
        XCTAssertEqual(try read(container), before)
    }

    // MARK: - Invalid containers

    func testInvalidContainersFailWithOneLineGivingTheReason() throws {
        try TestContainers.withDotName(path("dot.asice"))
        try TestContainers.withDotDotSegment(path("asice-relative.asice"))
        try write("text.asice", "This is just text, not a ZIP file.\n")
        try write("zero.asice", Data())
        try FileManager.default.createDirectory(atPath: path("folder.asice"), withIntermediateDirectories: true)
        try write("x.txt", "x\n")
        let valid = try read(try signedContainer("valid.asice"))
        try write("truncated.asice", valid.prefix(valid.count - 100))
        try FileManager.default.removeItem(atPath: path("valid.asice"))
        let cases: [(String, [String])] = [
            ("dot.asice", ["dot.asice", "entry name '.'", "not allowed", "'.' path segment"]),
            ("asice-relative.asice", ["asice-relative.asice", "'folder/../test1.txt'", "'..' path segment"]),
            ("text.asice", ["text.asice", "not a valid ZIP file"]),
            ("zero.asice", ["zero.asice", "not a valid ZIP file", "empty"]),
            ("truncated.asice", ["truncated.asice", "not a valid ZIP file"]),
            ("folder.asice", ["folder.asice", "Is a directory"]),
            ("missing.asice", ["missing.asice", "No such file or directory"]),
        ]
        for (name, words) in cases {
            let container = path(name)
            let before = FileManager.default.contents(atPath: container)
            for arguments in [["ls", container], ["ls", container, "--json"], ["extract", container, "-d", work.path],
                              ["add", container, "x.txt"], ["remove", container, "x.txt"]] {
                let result = try asicfs(arguments)
                assertFailure(result, mentions: words)
                if arguments.contains("--json") {
                    _ = try envelope(result, command: "ls", status: 1)  // a script gets the failure as JSON too
                } else {
                    XCTAssertEqual(result.stdout, "", "\(arguments)")
                }
                XCTAssertEqual(FileManager.default.contents(atPath: container), before, "\(arguments) changed \(name)")
            }
        }
        XCTAssertEqual(folderContents(work.path), ["asice-relative.asice", "dot.asice", "folder.asice", "text.asice",
                                                   "truncated.asice", "x.txt", "zero.asice"])
    }

    // MARK: - folders (-r)

    /// create and add take folders with -r: every file under them, named with '/' as a mount
    /// shows folders; a folder without -r is refused in one line and nothing is written.
    func testCreateAndAddTakeFoldersWithR() throws {
        try write("docs/a.txt", "alpha\n")
        try write("docs/sub/b.txt", "bravo\n")
        try write("more/c.csv", "c,1\n")
        try write("top.txt", "top\n")
        let container = path("folders.asice")
        assertFailure(try asicfs(["create", container, path("docs")]), status: 2, mentions: ["docs is a folder", "-r"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: container))
        assertSuccess(try asicfs(["create", container, "-r", path("docs"), path("top.txt")]))
        XCTAssertEqual(try dataFileNames(container), ["docs/a.txt", "docs/sub/b.txt", "top.txt"])

        let before = try read(container)
        let refused = try asicfs(["add", container, path("more")])
        assertFailure(refused, status: 2, mentions: ["more is a folder", "give -r"])
        XCTAssertEqual(refused.stderrLines.count, 1, refused.stderr)
        XCTAssertEqual(try read(container), before)
        // "." is the folder it names; --recursive is the long spelling.
        let added = try asicfs(["add", container, "--recursive", ".", "--json"], in: work.appendingPathComponent("more"))
        assertSuccess(added)
        XCTAssertEqual(try envelope(added, command: "add", status: 0)["added"] as? [String], ["more/c.csv"])
        XCTAssertEqual(try dataFileNames(container), ["docs/a.txt", "docs/sub/b.txt", "top.txt", "more/c.csv"])
        assertSuccess(try asicfs(["extract", container, "-d", path("out")]))
        XCTAssertEqual(try String(contentsOfFile: path("out/docs/sub/b.txt"), encoding: .utf8), "bravo\n")
        XCTAssertEqual(try String(contentsOfFile: path("out/more/c.csv"), encoding: .utf8), "c,1\n")
    }

    // MARK: - create

    func testCreateRefusesAnExistingNonEmptyFileAndLeavesItUntouched() throws {
        let existing = try write("existing.asice", "important data\n")
        try write("a.txt", "a\n")
        let result = try asicfs(["create", existing, "a.txt"])
        assertFailure(result, mentions: [existing, "already exists"])
        XCTAssertEqual(try read(existing), Data("important data\n".utf8))
        // Nor an existing container.
        let container = path("c.asice")
        assertSuccess(try asicfs(["create", container, "a.txt"]))
        let before = try read(container)
        assertFailure(try asicfs(["create", container]), mentions: ["already exists"])
        XCTAssertEqual(try read(container), before)
    }

    func testCreateOverAnExistingEmptyFileWorks() throws {
        let placeholder = try write("placeholder.asice", Data())
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: placeholder)
        try write("a.txt", "a\n")
        let result = try asicfs(["create", placeholder, "a.txt"])
        assertSuccess(result)
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(try dataFileNames(placeholder), ["a.txt"])
        // The placeholder's permissions are kept (it is replaced, not recreated with defaults).
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: placeholder)[.posixPermissions] as? Int, 0o640)
    }

    func testCreateRefusesTwoFilesWithTheSameBaseName() throws {
        try write("a.txt", "one\n")
        try write("sub/a.txt", "two\n")
        let container = path("c.asice")
        assertFailure(try asicfs(["create", container, "a.txt", "sub/a.txt"]), mentions: ["'a.txt'", "already exists"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: container))
    }

    func testASignedContainerCanBePutInsideANewOne() throws {
        let signed = try signedContainer("signed.asice")
        try write("extra.txt", "extra\n")
        let outer = path("outer.asice")
        assertSuccess(try asicfs(["create", outer, "signed.asice", "extra.txt"]))
        let files = dataFiles(of: try listing(outer))
        XCTAssertEqual(files.compactMap { $0["name"] as? String }, ["signed.asice", "extra.txt"])
        XCTAssertEqual(files.first?["media_type"] as? String, "application/vnd.etsi.asic-e+zip")
        XCTAssertEqual(files.first?["compression"] as? String, "stored", "an .asice is already compressed")
        let inner = try asicfs(["extract", outer, "signed.asice", "-p"])
        XCTAssertTrue(inner.stdoutData == (try read(signed)), "the signed container changed on the way")
    }

    func testAddFollowsASymbolicLinkToAFileAndUsesTheLinksName() throws {
        let container = path("c.asice")
        assertSuccess(try asicfs(["create", container]))
        try write("real.txt", "real content\n")
        try FileManager.default.createSymbolicLink(atPath: path("link.txt"), withDestinationPath: "real.txt")
        assertSuccess(try asicfs(["add", container, "link.txt"]))
        XCTAssertEqual(try dataFileNames(container), ["link.txt"])
        XCTAssertEqual(try asicfs(["extract", container, "link.txt", "-p"]).stdout, "real content\n")
    }

    func testAHardLinkToTheContainerKeepsTheOldVersion() throws {
        let container = path("c.asice")
        try write("a.txt", "a\n")
        try write("b.txt", "b\n")
        assertSuccess(try asicfs(["create", container, "a.txt"]))
        let before = try read(container)
        XCTAssertEqual(link(container, path("hard.asice")), 0)
        assertSuccess(try asicfs(["add", container, "b.txt"]))
        XCTAssertEqual(try dataFileNames(container), ["a.txt", "b.txt"])
        XCTAssertEqual(try read(path("hard.asice")), before)
        XCTAssertEqual(try dataFileNames(path("hard.asice")), ["a.txt"])
    }

    func testCreateWithAMissingFileFailsAndCreatesNothing() throws {
        try write("a.txt", "a\n")
        let container = path("c.asice")
        let result = try asicfs(["create", container, "a.txt", "missing.txt"])
        assertFailure(result, mentions: ["missing.txt", "No such file"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: container))
        XCTAssertEqual(folderContents(work.path), ["a.txt"], "a temporary was left behind")
    }

    func testCreateRefusesAFolder() throws {
        try FileManager.default.createDirectory(atPath: path("folder"), withIntermediateDirectories: true)
        assertFailure(try asicfs(["create", path("folder")]), mentions: ["folder", "Is a directory"])
        XCTAssertEqual(folderContents(path("folder")), [])
    }

    func testSavingThroughASymbolicLinkReplacesTheFileItPointsTo() throws {
        let real = path("real.asice")
        let link = path("link.asice")
        try write("a.txt", "a\n")
        assertSuccess(try asicfs(["create", real]))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real.asice")
        assertSuccess(try asicfs(["add", link, "a.txt"]))
        XCTAssertTrue(isSymbolicLink(link), "the link was replaced by a file")
        XCTAssertEqual(try dataFileNames(real), ["a.txt"])
        assertSuccess(try asicfs(["remove", link, "a.txt"]))
        XCTAssertTrue(isSymbolicLink(link))
        XCTAssertEqual(try dataFileNames(real), [])
        XCTAssertEqual(folderContents(work.path), ["a.txt", "link.asice", "real.asice"])
    }

    func testSavingKeepsTheContainersPermissions() throws {
        let container = path("c.asice")
        try write("a.txt", "a\n")
        try write("b.txt", "b\n")
        assertSuccess(try asicfs(["create", container, "a.txt"]))
        try FileManager.default.setAttributes([.posixPermissions: 0o604], ofItemAtPath: container)
        assertSuccess(try asicfs(["add", container, "b.txt"]))
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: container)[.posixPermissions] as? Int, 0o604)
        assertSuccess(try asicfs(["remove", container, "a.txt"]))
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: container)[.posixPermissions] as? Int, 0o604)
        XCTAssertEqual(try dataFileNames(container), ["b.txt"])
    }

    /// `add --mime TYPE` (digidoc-tool's --mime) sets the media type instead of the guess.
    func testAddWithMimeSetsTheMediaType() throws {
        let container = path("mime.asice")
        try write("a.txt", "alpha\n")
        assertSuccess(try asicfs(["create", container, path("a.txt")]))
        try write("data.bin", "binary\n")
        assertSuccess(try asicfs(["add", container, path("data.bin"), "--mime", "application/vnd.example+json"]))
        let files = dataFiles(of: try listing(container))
        XCTAssertEqual(files.last?["media_type"] as? String, "application/vnd.example+json")
        XCTAssertEqual(files.first?["media_type"] as? String, "text/plain")
        let manifest = try inspectWithPython(container)
        XCTAssertTrue("\(manifest["manifest"] ?? "")".contains("application/vnd.example+json"))
        let before = try read(container)
        try write("more.bin", "more\n")
        assertFailure(try asicfs(["add", container, path("more.bin"), "--mime", "not a type"]), status: 2, mentions: ["--mime takes a media type"])
        XCTAssertEqual(try read(container), before)
    }
}

import Foundation
import TestTools
import XCTest

/// `asicfs extract`: never over existing files without --force, never through symbolic links,
/// subfolders recreated, exact bytes on --stdout, and nothing written when a name is unknown.
final class ExtractTests: CLITestCase {
    private var container: String { path("c.asice") }
    private var out: URL { work.appendingPathComponent("out") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try write("a.txt", "alpha\n")
        try write("b.txt", "bravo\n")
        let result = try asicfs(["create", container, "a.txt", "b.txt"])
        XCTAssertEqual(result.status, 0, result.stderr)
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
    }

    private func outPath(_ name: String) -> String { out.appendingPathComponent(name).path }

    func testExtractRefusesToOverwriteAnExistingFileWithoutForce() throws {
        try write("a.txt", "precious\n", in: out)
        let before = try modificationSeconds(outPath("a.txt"))
        let result = try asicfs(["extract", container, "-d", out.path])
        assertFailure(result, mentions: [outPath("a.txt"), "already exists", "--force"])
        XCTAssertEqual(try read(outPath("a.txt")), Data("precious\n".utf8))
        XCTAssertEqual(try modificationSeconds(outPath("a.txt")), before)
        // All targets are checked first: b.txt, which did not exist, was not written either,
        // and no temporary is left behind.
        XCTAssertEqual(folderContents(out.path), ["a.txt"])
    }

    func testExtractWithForceOverwritesAnExistingFile() throws {
        try write("a.txt", "precious but stale\n", in: out)
        for spelling in ["--force", "-f"] {
            let result = try asicfs(["extract", container, "a.txt", "-d", out.path, spelling])
            assertSuccess(result)
            XCTAssertEqual(result.stderr, "")
            XCTAssertEqual(try read(outPath("a.txt")), Data("alpha\n".utf8))
        }
        XCTAssertEqual(folderContents(out.path), ["a.txt"])
    }

    func testExtractNeverReplacesAFolderWithAFile() throws {
        try FileManager.default.createDirectory(atPath: outPath("a.txt"), withIntermediateDirectories: true)
        try write("a.txt/keep", "keep", in: out)
        assertFailure(try asicfs(["extract", container, "a.txt", "-d", out.path, "--force"]), mentions: ["is a folder"])
        XCTAssertEqual(try read(outPath("a.txt/keep")), Data("keep".utf8))
    }

    func testExtractIntoDirectoryRecreatesSubfoldersForNestedNames() throws {
        let nested = path("nested.asice")
        try makeContainerWithPython(nested, files: [
            ("top.txt", "top\n"), ("sub/dir/deep.txt", "deep\n"), ("sub/other folder/ä b.txt", "other\n"),
        ])
        XCTAssertEqual(try dataFileNames(nested), ["top.txt", "sub/dir/deep.txt", "sub/other folder/ä b.txt"])
        let result = try asicfs(["extract", nested, "-d", out.path])
        assertSuccess(result)
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(tree(out.path), ["sub", "sub/dir", "sub/dir/deep.txt", "sub/other folder",
                                        "sub/other folder/ä b.txt", "top.txt"])
        XCTAssertEqual(try read(outPath("sub/dir/deep.txt")), Data("deep\n".utf8))
        XCTAssertEqual(try read(outPath("sub/other folder/ä b.txt")), Data("other\n".utf8))

        // One nested name on its own, into an existing subfolder.
        let again = work.appendingPathComponent("again")
        try FileManager.default.createDirectory(at: again.appendingPathComponent("sub"), withIntermediateDirectories: true)
        assertSuccess(try asicfs(["extract", nested, "sub/dir/deep.txt", "-d", again.path]))
        XCTAssertEqual(tree(again.path), ["sub", "sub/dir", "sub/dir/deep.txt"])
    }

    func testExtractRefusesASymbolicLinkWhereASubfolderWouldGo() throws {
        let nested = path("nested.asice")
        try makeContainerWithPython(nested, files: [("sub/deep.txt", "deep\n"), ("top.txt", "top\n")])
        let elsewhere = work.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: outPath("sub"), withDestinationPath: elsewhere.path)

        let attempts: [[String]] = [["extract", nested, "-d", out.path], ["extract", nested, "sub/deep.txt", "-d", out.path, "--force"]]
        for arguments in attempts {
            let result = try asicfs(arguments)
            assertFailure(result, mentions: [outPath("sub"), "symbolic link"])
            XCTAssertEqual(folderContents(elsewhere.path), [], "something was written through the link")
            XCTAssertEqual(folderContents(out.path), ["sub"], "top.txt or a temporary was written")
            XCTAssertTrue(isSymbolicLink(outPath("sub")))
        }
    }

    func testExtractRefusesASymbolicLinkAtTheTargetEvenWithForce() throws {
        let victim = try write("victim.txt", "do not touch\n")
        try FileManager.default.createSymbolicLink(atPath: outPath("a.txt"), withDestinationPath: victim)
        for force in [[], ["--force"]] {
            let result = try asicfs(["extract", container, "a.txt", "-d", out.path] + force)
            assertFailure(result, mentions: [outPath("a.txt"), "symbolic link"])
            XCTAssertEqual(try read(victim), Data("do not touch\n".utf8))
            XCTAssertTrue(isSymbolicLink(outPath("a.txt")))
        }
    }

    func testExtractToStdoutWritesExactBytes() throws {
        let big = compressibleBytes(count: 3 << 20, seed: 42)
        try write("big.bin", big)
        var binary = Data((0...255).map { UInt8($0) })
        binary.append(contentsOf: [0x00, 0x0D, 0x0A, 0x0A, 0xFF, 0x00])
        try write("binary.dat", binary)
        assertSuccess(try asicfs(["add", container, "big.bin", "binary.dat"]))

        for spelling in ["-p", "--stdout"] {
            let result = try asicfs(["extract", container, "big.bin", spelling])
            assertSuccess(result)
            XCTAssertEqual(result.stderr, "")
            XCTAssertEqual(result.stdoutData.count, big.count)
            XCTAssertTrue(result.stdoutData == big, "3 MiB on stdout differ from the original")
        }
        let small = try asicfs(["extract", container, "binary.dat", "-p"])
        XCTAssertEqual(small.stdoutData, binary)

        // Several names: their bytes one after the other, in the order given.
        let several = try asicfs(["extract", container, "b.txt", "binary.dat", "a.txt", "-p"])
        assertSuccess(several)
        XCTAssertEqual(several.stdoutData, Data("bravo\n".utf8) + binary + Data("alpha\n".utf8))
        // With --stdout, -d and -f are ignored: nothing lands in the folder, none is created.
        let ignored = try asicfs(["extract", container, "a.txt", "-p", "-d", work.appendingPathComponent("unused").path, "-f"])
        assertSuccess(ignored)
        XCTAssertEqual(ignored.stdout, "alpha\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: work.appendingPathComponent("unused").path))
        XCTAssertEqual(folderContents(out.path), [])
        XCTAssertFalse(folderContents(work.path).contains { $0.hasSuffix(".part") })
    }

    func testExtractingAnUnknownNameFailsAndWritesNothing() throws {
        for arguments in [["extract", container, "nope.txt", "-d", out.path],
                          ["extract", container, "a.txt", "nope.txt", "-d", out.path],
                          ["extract", container, "a.txt", "nope.txt", "-p"]] {
            let result = try asicfs(arguments)
            assertFailure(result, mentions: [container, "no data file named 'nope.txt'"])
            XCTAssertEqual(result.stdout, "", "\(arguments)")
            XCTAssertEqual(folderContents(out.path), [], "\(arguments)")
        }
    }

    func testAFileAndAFolderOfTheSameNameFailCleanlyBeforeAnythingIsWritten() throws {
        // A foreign container may hold both 'a' and 'a/b'; they cannot both be extracted. Whether
        // open or extract refuses it, the refusal is one readable line and nothing is written.
        let clash = path("clash.asice")
        try makeContainerWithPython(clash, files: [("a", "file a\n"), ("a/b", "inner\n")])
        let result = try asicfs(["extract", clash, "-d", out.path])
        assertFailure(result, mentions: [])
        XCTAssertFalse(result.stderr.contains("Error Domain"), "raw Foundation error: \(result.stderr)")
        XCTAssertEqual(tree(out.path), [], "a partial extraction was left behind")
    }

    func testDamagedDataIsNeverExtracted() throws {
        let damaged = path("damaged.asice")
        try makeContainerWithPython(damaged, files: [("good.txt", "good\n"), ("bad.txt", "THIS-IS-THE-PAYLOAD\n")],
                                    compress: false)
        var bytes = try read(damaged)
        guard let range = bytes.range(of: Data("THIS-IS-THE-PAYLOAD".utf8)) else {
            throw TestSetupError("payload not found in the stored container")
        }
        bytes[range.lowerBound] = UInt8(ascii: "X")  // same size, wrong CRC-32
        try bytes.write(to: URL(fileURLWithPath: damaged))
        XCTAssertEqual(try dataFileNames(damaged), ["good.txt", "bad.txt"], "the damage is only in the data")

        assertFailure(try asicfs(["extract", damaged, "bad.txt", "-d", out.path]), mentions: ["'bad.txt'", "damaged"])
        XCTAssertEqual(folderContents(out.path), [], "a damaged file or its temporary appeared")
        let good = try asicfs(["extract", damaged, "good.txt", "-d", out.path])
        assertSuccess(good)
        XCTAssertEqual(folderContents(out.path), ["good.txt"])
    }

    /// A deflate stream that fails part-way through a large entry is one line and exit 1, for
    /// every way of extracting it (it crashed asicfs with SIGILL).
    func testACorruptStreamInALargeEntryIsOneLineNotACrash() throws {
        let damaged = path("corrupt.asice")
        try DamagedContainer.make(at: damaged, damage: .corruptStream)
        for _ in 0..<3 {
            assertFailure(try asicfs(["extract", damaged, "-d", out.path]), mentions: ["'big.txt'", "damaged"])
            XCTAssertEqual(folderContents(out.path), [], "a damaged file or its temporary appeared")
            assertFailure(try asicfs(["extract", damaged, "--stdout", "big.txt"]), mentions: ["'big.txt'", "damaged"])
        }
        // A reader slower than the inflating keeps the helper thread busy handing over the
        // previous buffer when the stream fails: the case that crashed (exit 132, SIGILL).
        let slow = try runTool("/bin/bash", ["-c", "\"$1\" extract \"$2\" --stdout big.txt 2>\"$3\" | (sleep 1; cat > /dev/null); echo ${PIPESTATUS[0]}",
                                             "bash", Self.binary, damaged, path("slow.err")])
        XCTAssertEqual(slow.stdout, "1\n", "exit status of asicfs behind a slow reader")
        let message = try String(contentsOfFile: path("slow.err"), encoding: .utf8)
        XCTAssertTrue(message.hasPrefix("asicfs: ") && message.contains("'big.txt'") && message.filter { $0 == "\n" }.count == 1, message)
        let wrong = path("wrong.asice")
        try DamagedContainer.make(at: wrong, damage: .wrongBytes)
        assertFailure(try asicfs(["extract", wrong, "-d", out.path]), mentions: ["'big.txt'", "CRC-32"])
        XCTAssertEqual(folderContents(out.path), [])
    }

    func testExtractIntoAMissingFolderCreatesIt() throws {
        let missing = work.appendingPathComponent("missing/and deeper").path
        let result = try asicfs(["extract", container, "-d", missing])
        assertSuccess(result)
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(folderContents(missing), ["a.txt", "b.txt"])
        XCTAssertEqual(try read(missing + "/b.txt"), Data("bravo\n".utf8))
    }

    func testExtractIntoAFileFails() throws {
        let file = try write("not-a-folder", "plain file\n")
        assertFailure(try asicfs(["extract", container, "-d", file]), mentions: [file, "Not a directory"])
        XCTAssertEqual(try read(file), Data("plain file\n".utf8))
    }

    func testExtractLeavesNoTemporaryFilesAndUsesTheUmask() throws {
        assertSuccess(try asicfs(["extract", container, "-d", out.path]))
        XCTAssertEqual(folderContents(out.path), ["a.txt", "b.txt"])
        let permissions = try FileManager.default.attributesOfItem(atPath: outPath("a.txt"))[.posixPermissions] as? Int
        let mask = umask(0o022)
        umask(mask)
        XCTAssertEqual(permissions, 0o666 & ~Int(mask))
    }
}

/// Extraction of containers with many entries: every file arrives, in its subfolder, with its bytes.
final class ManyEntryExtractTests: CLITestCase {
    func testSixteenThousandEntriesInNestedFoldersAllExtract() throws {
        let container = path("many.asice")
        // d00..d39/s0..s3/f00001.txt (100 files a subfolder), and every tenth file at the top.
        let script = """
        import sys, zipfile
        from xml.sax.saxutils import quoteattr
        names = [('f%05d.txt' % i) if i % 10 == 0 else 'd%02d/s%d/f%05d.txt' % (i // 400, i // 100 % 4, i) for i in range(16000)]
        with zipfile.ZipFile(sys.argv[1], 'w') as z:
            z.writestr(zipfile.ZipInfo('mimetype'), 'application/vnd.etsi.asic-e+zip')
            for i, name in enumerate(names):
                z.writestr(zipfile.ZipInfo(name), b'%d\\n' % i)
            z.writestr('META-INF/manifest.xml', '<?xml version="1.0" encoding="UTF-8"?>'
                '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
                '<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"/>'
                + ''.join('<manifest:file-entry manifest:full-path=%s manifest:media-type="text/plain"/>' % quoteattr(n)
                          for n in names) + '</manifest:manifest>', compress_type=zipfile.ZIP_DEFLATED)
        """
        let made = try runTool("/usr/bin/env", ["python3", "-c", script, container])
        guard made.status == 0 else { throw TestSetupError("python3 failed: \(made.stderr)") }

        let out = work.appendingPathComponent("out").path
        // Not a timing test: the generous limit only keeps a hang from stalling the suite.
        let result = try asicfs(["extract", container, "-d", out], timeout: 600)
        assertSuccess(result)
        XCTAssertEqual(result.stderr, "")
        let files = tree(out).filter { $0.hasSuffix(".txt") }
        XCTAssertEqual(files.count, 16000)
        XCTAssertEqual(folderContents(out).filter { $0.hasPrefix("d") }.count, 40)
        XCTAssertEqual(folderContents(out + "/d07"), ["s0", "s1", "s2", "s3"])
        for index in [0, 1, 7777, 15999] {
            let name = index % 10 == 0 ? String(format: "f%05d.txt", index)
                : String(format: "d%02d/s%d/f%05d.txt", index / 400, index / 100 % 4, index)
            XCTAssertEqual(try read(out + "/" + name), Data("\(index)\n".utf8), name)
        }
    }

    func testAFileThatIsAlsoAFolderDeepDownIsRefusedWhateverItsPlaceInTheList() throws {
        let clash = path("clash.asice")
        try makeContainerWithPython(clash, files: [("x/y/z/deep.txt", "deep\n"), ("top.txt", "top\n"), ("x/y", "file\n")])
        let out = work.appendingPathComponent("out").path
        assertFailure(try asicfs(["extract", clash, "-d", out]), mentions: ["'x/y' is both a file and a folder"])
        XCTAssertEqual(tree(out), [])
    }
}

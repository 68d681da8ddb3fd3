import Foundation
import XCTest

/// Names with terminal control characters (ESC, BEL, OSC sequences, newlines, C1 controls,
/// bidirectional overrides): every human output shows them escaped and on one line, `--json`
/// keeps the true names, extraction writes the true names, and new names may not contain them.
final class ControlCharacterNameTests: CLITestCase {
    /// A newline that would print a fake listing line, a right-to-left override that shows
    /// "exe.txt" as "txt.exe", a C1 CSI (ESC [ on 8-bit terminals), DEL, a tab, and a name that
    /// must stay as it is. (ESC and BEL cannot be written into a manifest: XML 1.0 forbids them.)
    static let hostileNames = [
        "report.pdf\n     666  2026-12-03 12:00  text\u{2215}plain  fake-line.txt",  // ∕: no subfolder
        "invoice-\u{202E}fdp.exe",
        "csi-\u{9B}31m-red.txt",
        "del-\u{7F}-and-tab-\t.txt",
        umlautName,
    ]
    static let oscTitle = "\u{1B}]0;pwned\u{07}"

    // MARK: - Listing

    func testListingPrintsOneVisibleLinePerFileAndJSONKeepsTheTrueNames() throws {
        let container = path("hostile.asice")
        try makeContainerWithPython(container, files: Self.hostileNames.map { ($0, "x") })

        let result = try asicfs(["ls", container])
        assertSuccess(result)
        XCTAssertEqual(result.stderr, "")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertEqual(lines.count, 1 + Self.hostileNames.count, "a header and one line per file:\n\(result.stdout)")
        assertPrintable(result.stdoutData, allowingNewlines: true)
        XCTAssertTrue(lines[1].hasSuffix("  report.pdf\\n     666  2026-12-03 12:00  text\u{2215}plain  fake-line.txt"), String(lines[1]))
        XCTAssertTrue(lines[2].hasSuffix("  invoice-\\u{202E}fdp.exe"), String(lines[2]))
        XCTAssertTrue(lines[3].hasSuffix("  csi-\\u{009B}31m-red.txt"), String(lines[3]))
        XCTAssertTrue(lines[4].hasSuffix("  del-\\x7f-and-tab-\\t.txt"), String(lines[4]))
        XCTAssertTrue(lines[5].hasSuffix("  " + Self.umlautName), String(lines[5]))

        XCTAssertEqual(try dataFileNames(container), Self.hostileNames)
        // The JSON is plain ASCII-safe text too: C1 and bidirectional characters as \u escapes.
        let json = try asicfs(["ls", container, "--json"])
        assertPrintable(json.stdoutData, allowingNewlines: true)
    }

    func testExtractWritesTheTrueNames() throws {
        let container = path("hostile.asice")
        try makeContainerWithPython(container, files: Self.hostileNames.map { ($0, "x") })
        let out = work.appendingPathComponent("out").path
        let result = try asicfs(["extract", container, "-d", out])
        assertSuccess(result)
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(folderContents(out), Self.hostileNames.sorted())
    }

    /// ASiC-S needs no manifest, so its one data file can be called anything, ESC and BEL included,
    /// and a name that is not UTF-8 is read as IBM 437: both print as visible characters.
    func testAnEscapeSequenceOrANonUTF8NameInAnASiCSContainerIsShownEscaped() throws {
        let osc = path("osc.asics")
        try makeASiCS(osc, dataFile: "title-\(Self.oscTitle).txt")
        let listing = try asicfs(["ls", osc])
        assertSuccess(listing)
        assertPrintable(listing.stdoutData, allowingNewlines: true)
        XCTAssertTrue(listing.stdout.contains("  title-\\x1b]0;pwned\\x07.txt\n"), listing.stdout)
        XCTAssertEqual(try dataFileNames(osc), ["title-\(Self.oscTitle).txt"])
        let out = work.appendingPathComponent("out").path
        assertSuccess(try asicfs(["extract", osc, "-d", out]))
        XCTAssertEqual(folderContents(out), ["title-\(Self.oscTitle).txt"])

        // "caf\xe9\x1b.txt": Latin-1, not UTF-8; 0xE9 is 'Θ' in IBM 437, and the ESC stays visible.
        let latin1 = path("latin1.asics")
        try makeASiCS(latin1, dataFile: "cafX\u{1B}.txt", patchNameTo: [0x63, 0x61, 0x66, 0xE9, 0x1B, 0x2E, 0x74, 0x78, 0x74])
        let shown = try asicfs(["ls", latin1])
        assertSuccess(shown)
        assertPrintable(shown.stdoutData, allowingNewlines: true)
        XCTAssertTrue(shown.stdout.contains("  cafΘ\\x1b.txt\n"), shown.stdout)
    }

    // MARK: - Errors

    func testAnErrorNamingAHostileFileIsOneLineWithoutControlBytes() throws {
        // The ESC name is in the ZIP but (it cannot be) not in the manifest: the error names it.
        let container = path("unlisted.asice")
        try makeContainerWithPython(container, files: [("listed.txt", "x")])
        try addZipEntry(container, name: "unlisted-\(Self.oscTitle)\n.txt")
        let result = try asicfs(["ls", container])
        assertFailure(result, mentions: ["unlisted-\\x1b]0;pwned\\x07\\n.txt", "is in the ZIP but not in the manifest"])
        assertPrintable(result.stderrData, allowingNewlines: false)

        // A name given on the command line is shown the same way.
        let good = path("good.asice")
        try makeContainerWithPython(good, files: [("a.txt", "x")])
        let missing = try asicfs(["extract", good, "nothing-\u{1B}[2J\n\u{202E}.txt", "-d", work.appendingPathComponent("out").path])
        assertFailure(missing, mentions: ["no data file named 'nothing-\\x1b[2J\\n\\u{202E}.txt'"])
        assertPrintable(missing.stderrData, allowingNewlines: false)
    }

    // MARK: - New names

    func testAddAndCreateRefuseNamesWithControlOrBidirectionalCharacters() throws {
        let container = path("c.asice")
        try write("a.txt", "alpha\n")
        assertSuccess(try asicfs(["create", container, "a.txt"]))
        let before = try read(container)
        let refused: [(name: String, reason: String)] = [
            ("csi-\u{9B}31m.txt", "control character U+009B"),
            ("nel-\u{85}.txt", "control character U+0085"),
            ("invoice-\u{202E}fdp.exe", "bidirectional control U+202E"),
            ("isolate-\u{2067}x.txt", "bidirectional control U+2067"),
            ("title-\(Self.oscTitle).txt", "control character U+001B"),
            ("two\nlines.txt", "control character U+000A"),
        ]
        for (index, (name, reason)) in refused.enumerated() {
            let source = try write(name, "data \(index)\n")
            let add = try asicfs(["add", container, source])
            assertFailure(add, mentions: ["is not allowed", reason])
            assertPrintable(add.stderrData, allowingNewlines: false)
            XCTAssertEqual(try read(container), before, "\(reason): the container is unchanged")

            let created = path("new-\(index).asice")
            let create = try asicfs(["create", created, source])
            assertFailure(create, mentions: ["is not allowed", reason])
            assertPrintable(create.stderrData, allowingNewlines: false)
            XCTAssertFalse(FileManager.default.fileExists(atPath: created), "\(reason): no container is left behind")
        }
        // Letters of any script, and the direction marks that right-to-left names use, are fine.
        for name in [Self.umlautName, "שלום\u{200F}.txt"] {
            assertSuccess(try asicfs(["add", container, try write(name, "ok\n")]))
        }
        XCTAssertEqual(try dataFileNames(container), ["a.txt", Self.umlautName, "שלום\u{200F}.txt"])
    }

    // MARK: - Helpers

    /// An ASiC-S container (mimetype, one data file, a time-stamp token; no manifest). With
    /// `patchNameTo`, the data file's name bytes are then replaced (same length) by raw bytes.
    private func makeASiCS(_ path: String, dataFile: String, patchNameTo raw: [UInt8]? = nil) throws {
        let script = """
        import sys, zipfile
        path, name, raw = sys.argv[1], sys.argv[2], sys.argv[3]
        with zipfile.ZipFile(path, 'w') as z:
            z.writestr(zipfile.ZipInfo('mimetype'), 'application/vnd.etsi.asic-s+zip')
            z.writestr(zipfile.ZipInfo(name), b'data\\n')
            z.writestr(zipfile.ZipInfo('META-INF/timestamp.tst'), b'not a real token')
        if raw:
            old, new = name.encode('utf-8'), bytes.fromhex(raw)
            assert len(old) == len(new)
            data = open(path, 'rb').read()
            assert data.count(old) == 2  # the local header and the central directory
            open(path, 'wb').write(data.replace(old, new))
        """
        let hex = raw.map { $0.map { String(format: "%02x", $0) }.joined() } ?? ""
        let result = try runTool("/usr/bin/env", ["python3", "-c", script, path, dataFile, hex])
        guard result.status == 0 else { throw TestSetupError("python3 failed: \(result.stderr)") }
    }

    /// Appends a stored entry that the manifest does not list.
    private func addZipEntry(_ container: String, name: String) throws {
        let script = """
        import sys, zipfile
        with zipfile.ZipFile(sys.argv[1], 'a') as z:
            z.writestr(zipfile.ZipInfo(sys.argv[2]), b'x')
        """
        let result = try runTool("/usr/bin/env", ["python3", "-c", script, container, name])
        guard result.status == 0 else { throw TestSetupError("python3 failed: \(result.stderr)") }
    }
}

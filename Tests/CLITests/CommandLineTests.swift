import Configuration
import Foundation
import XCTest

/// Version, help, and how usage mistakes are reported (exit code 2).
final class CommandLineTests: CLITestCase {
    static let commandNames = ["create", "ls", "extract", "add", "remove"]
    static let synopses = [
        "create": "create CONTAINER [-r] [FILE...]",
        "ls": "ls CONTAINER [--json]",
        "extract": "extract CONTAINER [NAME...] [-d DIR]",
        "add": "add CONTAINER [-r] FILE...",
        "remove": "remove CONTAINER (NAME... | --signature N)",
        "sign": "sign CONTAINER --method METHOD [KEY=VALUE...]",
        "verify": "verify CONTAINER [--json] [--warnings=error|warning|ignore]",
    ]

    func testVersionFlagsPrintTheVersionAndExitZero() throws {
        for spelling in ["--version", "-V", "version"] {
            let result = try asicfs([spelling])
            assertSuccess(result)
            XCTAssertEqual(result.stdout, "asicfs \(asicfsVersion)\n", spelling)
            XCTAssertEqual(result.stderr, "", spelling)
        }
        XCTAssertTrue(asicfsVersion.split(separator: ".").count == 3, "version '\(asicfsVersion)' is not x.y.z")
    }

    /// `--version --verbose` lists the built-in trust with its expiry, and warns within a year of it.
    func testVerboseVersionListsTheBuiltInTrustAndWhatExpiresSoon() throws {
        let result = try asicfs(["--version", "--verbose"])
        assertSuccess(result)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "asicfs \(asicfsVersion)")
        XCTAssertTrue(lines.contains("    Patrick Kremer (Signature), valid until 2028-05-30") || lines.contains { $0.hasPrefix("    Patrick Kremer (Signature), valid until 2028-05-30  ") },
                      result.stdout)
        XCTAssertTrue(result.stdout.contains("DigiCert Global Root G2, valid until 2038-01-15"), result.stdout)
        XCTAssertTrue(result.stdout.contains("Test TSL, valid until 2028-11-12"), result.stdout)
        // The warning follows the clock: a signer within a year of its end says so.
        // (Lines within days of the one-year mark are left out: the clock may pass it mid-test.)
        for line in lines {
            guard let range = line.range(of: "valid until "),
                  let date = ISO8601DateFormatter().date(from: String(line[range.upperBound...].prefix(10)) + "T00:00:00Z") else { continue }
            let warned = line.contains("warning: expires in") || line.contains("EXPIRED")
            if date.timeIntervalSinceNow < 360 * 86_400 { XCTAssertTrue(warned, line) }
            if date.timeIntervalSinceNow > 370 * 86_400 { XCTAssertFalse(warned, line) }
        }
    }

    /// Typos get the closest name; other tools' names are aliases; global options may come first.
    func testSuggestionsAliasesAndGlobalOptionsBeforeTheCommand() throws {
        try write("a.txt", "alpha\n")
        assertSuccess(try asicfs(["create", path("c.asice"), path("a.txt")]))
        let container = path("c.asice")
        assertFailure(try asicfs(["lst", container]), status: 2, mentions: ["unknown command 'lst'; did you mean 'ls'?"])
        assertFailure(try asicfs(["verfy", container]), status: 2, mentions: ["did you mean 'verify'?"])
        assertFailure(try asicfs(["sign", container, "--method", "mobileid"]), status: 2, mentions: ["unknown method 'mobileid'; did you mean 'mobile-id'?"])
        assertFailure(try asicfs(["ls", container, "-o", "tsa_url=x"]), status: 2, mentions: ["unknown configuration key 'tsa_url'; did you mean 'tsa-url'?"])
        assertFailure(try asicfs(["sign", container, "--method", "pkcs12", "fil=x"]), status: 2, mentions: ["unknown parameter 'fil'; did you mean 'file'?"])
        assertFailure(try asicfs(["frobnicate", container]), status: 2, mentions: ["unknown command 'frobnicate' (see"])

        let listed = try asicfs(["list", container])
        assertSuccess(listed)
        XCTAssertEqual(listed.stdout, try asicfs(["ls", container]).stdout)
        try write("extra.txt", "extra\n")
        assertSuccess(try asicfs(["add", container, path("extra.txt")]))
        assertSuccess(try asicfs(["rm", container, "extra.txt"]))
        XCTAssertFalse(try dataFileNames(container).contains("extra.txt"))
        assertFailure(try asicfs(["unmount", path("not-mounted")]), mentions: ["cannot unmount"])

        let config = try write("my.conf", "profile = B\n")
        for arguments in [["-q", "ls", container], ["--config", config, "ls", container], ["-o", "tsl=none", "-q", "list", container],
                          ["--config=\(config)", "ls", container]] {
            let result = try asicfs(arguments)
            assertSuccess(result)
            XCTAssertEqual(result.stdout, listed.stdout, "\(arguments)")
        }
        assertFailure(try asicfs(["-o", "tsa_url=x", "ls", container]), status: 2, mentions: ["did you mean 'tsa-url'?"])
    }

    func testHelpListsEveryCommandExitCodesAndSettings() throws {
        for spelling in ["--help", "-h", "help"] {
            let result = try asicfs([spelling])
            assertSuccess(result)
            XCTAssertEqual(result.stderr, "", spelling)
            XCTAssertTrue(result.stdout.hasPrefix("asicfs \(asicfsVersion): ASiC-E signature containers"), result.stdout)
            XCTAssertTrue(result.stdout.contains("Usage: asicfs COMMAND"), spelling)
            for synopsis in Self.synopses.values {
                XCTAssertTrue(result.stdout.contains("  " + synopsis), "'\(synopsis)' missing from \(spelling)")
            }
            XCTAssertTrue(result.stdout.contains("Exit codes: 0 success, 1 the operation failed"), spelling)
            for (key, _) in Configuration.keys {
                XCTAssertTrue(result.stdout.contains("  " + key + " "), "setting '\(key)' missing from \(spelling)")
            }
            // The help names the default config file, which follows XDG_CONFIG_HOME.
            XCTAssertTrue(result.stdout.contains(configHome.path + "/asicfs/config"), spelling)
        }
    }

    func testCommandHelpShowsThatCommandsUsageAndOptions() throws {
        let ownOptions = [
            "create": ["-r, --recursive"],
            "ls": ["--json"],
            "extract": ["-d, --directory VALUE", "-p, --stdout", "-f, --force"],
            "add": ["-r, --recursive", "--replace", "--mime VALUE"],
            "remove": ["--signature VALUE"],
        ]
        for name in Self.commandNames {
            let result = try asicfs([name, "--help"])
            assertSuccess(result)
            XCTAssertEqual(result.stderr, "", name)
            XCTAssertTrue(result.stdout.hasPrefix("Usage: asicfs \(Self.synopses[name]!)\n"), result.stdout)
            for option in ownOptions[name]! + ["--config VALUE", "-o, --option VALUE", "-q, --quiet", "-h, --help"] {
                XCTAssertTrue(result.stdout.contains("  " + option), "'\(option)' missing from '\(name) --help'")
            }
            // Only this command's usage, not the others'.
            for other in Self.commandNames where other != name {
                XCTAssertFalse(result.stdout.contains("Usage: asicfs \(other) "), "\(name) --help shows \(other)")
            }
            let short = try asicfs([name, "-h"])
            XCTAssertEqual(short.status, 0)
            XCTAssertEqual(short.stdout, result.stdout, "\(name) -h differs from \(name) --help")
        }
    }

    /// `sign --help` names the settings signing reads, each a real key, every Mobile-ID and
    /// Smart-ID one among them, and says that smart-id's country= is not a place.
    func testSignHelpListsThePhoneSettingsAndTheCountryRule() throws {
        let help = try asicfs(["sign", "--help"])
        assertSuccess(help)
        let flat = help.stdout.replacingOccurrences(of: "\n", with: " ")
        let named = Set(flat.matches(of: /[a-z]+(?:-[a-z]+)*\.[a-z]+(?:-[a-z]+)*/).map { String($0.output) })
            .filter { $0.hasPrefix("mobile-id.") || $0.hasPrefix("smart-id.") }
        let phoneKeys = Configuration.knownKeys.filter { $0.hasPrefix("mobile-id.") || $0.hasPrefix("smart-id.") }
        XCTAssertEqual(named, phoneKeys, help.stdout)
        for key in ["tsa-url", "ocsp-url", "profile", "tsl", "tsl-cert", "trust-anchors", "cache-dir", "proxy", "notify"] {
            XCTAssertTrue(flat.contains(" \(key)"), "'\(key)' missing from sign --help")
        }
        XCTAssertTrue(flat.contains("except that smart-id's country= is the person's country (EE, LV or LT), not a place"), help.stdout)
        XCTAssertFalse(flat.contains("Every method also takes role=, city=, state=, postal-code= and country=."), help.stdout)
    }

    func testHelpCommandShowsTheSameTextAsCommandHelp() throws {
        for name in Self.commandNames {
            let viaHelp = try asicfs(["help", name])
            let viaFlag = try asicfs([name, "--help"])
            assertSuccess(viaHelp)
            XCTAssertEqual(viaHelp.stderr, "")
            XCTAssertTrue(viaHelp.stdout.hasPrefix("Usage: asicfs \(Self.synopses[name]!)"), viaHelp.stdout)
            XCTAssertEqual(viaHelp.stdout, viaFlag.stdout, "help \(name) and \(name) --help differ")
        }
    }

    func testHelpFlagWinsOverMissingArguments() throws {
        // No CONTAINER, no FILE: still help, not a usage error.
        let result = try asicfs(["add", "--help"])
        assertSuccess(result)
        XCTAssertTrue(result.stdout.hasPrefix("Usage: asicfs add CONTAINER [-r] FILE..."))
    }

    func testNoArgumentsIsAUsageErrorWithHelpOnStderr() throws {
        let result = try asicfs([])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.stdout, "")
        XCTAssertTrue(result.stderr.contains("Usage: asicfs COMMAND"), result.stderr)
    }

    func testUnknownCommandIsAUsageError() throws {
        let result = try asicfs(["frobnicate", "x.asice"])
        assertFailure(result, status: 2, mentions: ["unknown command", "'frobnicate'"])
        XCTAssertEqual(result.stdout, "")
        // An option where the command should be is not a command either.
        assertFailure(try asicfs(["--frobnicate"]), status: 2, mentions: ["unknown command", "'--frobnicate'"])
    }

    func testUnknownOptionIsAUsageErrorNamingTheOption() throws {
        let container = path("c.asice")
        assertSuccess(try asicfs(["create", container]))
        for command in [["ls", container], ["extract", container], ["add", container, container],
                        ["remove", container, "x"], ["create", path("new.asice")]] {
            let result = try asicfs(command + ["--frobnicate"])
            assertFailure(result, status: 2, mentions: ["unknown option", "'--frobnicate'", "asicfs \(command[0]) --help"])
        }
        // Options of one command are not options of another.
        assertFailure(try asicfs(["ls", container, "--replace"]), status: 2, mentions: ["unknown option", "'--replace'"])
        assertFailure(try asicfs(["add", container, container, "-f"]), status: 2, mentions: ["'-f'"])
        // A usage error changes nothing.
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("new.asice")))
    }

    func testMissingArgumentIsAUsageError() throws {
        let container = path("c.asice")
        assertSuccess(try asicfs(["create", container]))
        let cases: [([String], [String])] = [
            (["create"], ["missing CONTAINER"]),
            (["ls"], ["missing CONTAINER"]),
            (["extract"], ["missing CONTAINER"]),
            (["add"], ["missing"]),
            (["add", container], ["missing FILE"]),
            (["remove", container], ["missing NAME"]),
            (["extract", container, "-d"], ["'-d'", "needs a value"]),
            (["ls", container, "--config"], ["'--config'", "needs a value"]),
            (["ls", container, "-o"], ["'-o'", "needs a value"]),
        ]
        for (arguments, words) in cases {
            let result = try asicfs(arguments)
            assertFailure(result, status: 2, mentions: words)
            XCTAssertEqual(result.stdout, "", "\(arguments)")
        }
    }

    func testExtraOrMalformedArgumentsAreUsageErrors() throws {
        let container = path("c.asice")
        assertSuccess(try asicfs(["create", container]))
        assertFailure(try asicfs(["ls", container, container]), status: 2, mentions: ["one CONTAINER"])
        assertFailure(try asicfs(["ls", container, "--json=yes"]), status: 2, mentions: ["'--json'", "takes no value"])
    }

    func testDoubleDashEndsOptionsSoNamesMayStartWithADash() throws {
        let container = path("c.asice")
        try write("-dash.txt", "dash\n")
        assertSuccess(try asicfs(["create", container]))
        assertFailure(try asicfs(["add", container, "-dash.txt"]), status: 2, mentions: ["unknown option"])
        let result = try asicfs(["add", container, "--", "-dash.txt"])
        assertSuccess(result)
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(try dataFileNames(container), ["-dash.txt"])
        let out = try asicfs(["extract", "-p", container, "--", "-dash.txt"])
        assertSuccess(out)
        XCTAssertEqual(out.stdout, "dash\n")
    }

    func testBundledShortOptionsAreRefused() throws {
        let container = path("c.asice")
        try write("a.txt", "alpha")
        assertSuccess(try asicfs(["create", container, "a.txt"]))
        let out = work.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        assertFailure(try asicfs(["extract", container, "-d", out.path, "-qf"]), status: 2, mentions: ["unknown option", "'-qf'"])
        XCTAssertEqual(folderContents(out.path), [])
    }

    func testVersionAfterACommandIsAnUnknownOption() throws {
        let container = path("c.asice")
        assertSuccess(try asicfs(["create", container]))
        assertFailure(try asicfs(["ls", container, "--version"]), status: 2, mentions: ["unknown option", "'--version'"])
    }

    func testALoneDashIsAFileNamedDash() throws {
        try write("a.txt", "alpha")
        assertSuccess(try asicfs(["create", "dash.asice", "a.txt"]))
        try FileManager.default.moveItem(atPath: path("dash.asice"), toPath: path("-"))
        let listed = try asicfs(["ls", "-"])
        assertSuccess(listed)
        XCTAssertTrue(listed.stdout.hasPrefix("-: ASiC-E, 1 data file, not signed\n"), listed.stdout)
        let extracted = try asicfs(["extract", "-", "a.txt", "-p"])
        XCTAssertEqual(extracted.stdout, "alpha")
        try write("b.txt", "bravo")
        assertSuccess(try asicfs(["add", "-", "b.txt"]))
        XCTAssertEqual(try dataFileNames(path("-")), ["a.txt", "b.txt"])
    }

    func testCreatingAContainerWithAOneCharacterNameWorks() throws {
        try write("a.txt", "alpha")
        for name in ["c", "-"] {
            let created = try asicfs(["create", name, "a.txt"])
            let how = created.reason == .uncaughtSignal ? "was killed by signal" : "exited with"
            XCTAssertEqual(created.status, 0, "create \(name) \(how) \(created.status)")
            guard created.status == 0 else { continue }
            XCTAssertEqual(created.stdout, "created \(name) with 1 data file\n")
            XCTAssertEqual(try dataFileNames(path(name)), ["a.txt"])
        }
    }

    func testTheLastValueOfARepeatedOptionCounts() throws {
        let container = path("c.asice")
        try write("a.txt", "alpha")
        assertSuccess(try asicfs(["create", container, "a.txt"]))
        for name in ["first", "second"] {
            try FileManager.default.createDirectory(atPath: path(name), withIntermediateDirectories: true)
        }
        assertSuccess(try asicfs(["extract", container, "-d", path("first"), "--directory", path("second")]))
        XCTAssertEqual(folderContents(path("first")), [])
        XCTAssertEqual(folderContents(path("second")), ["a.txt"])
    }

    func testOptionsMayComeBeforePositionalsAndInBothSpellings() throws {
        let container = path("c.asice")
        try write("a.txt", "alpha")
        assertSuccess(try asicfs(["create", container, "a.txt"]))
        let out = work.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        assertSuccess(try asicfs(["extract", "--directory=\(out.path)", container]))
        XCTAssertEqual(try read(out.appendingPathComponent("a.txt").path), Data("alpha".utf8))
        assertSuccess(try asicfs(["extract", "-f", "-d", out.path, container, "a.txt"]))
        XCTAssertEqual(try read(out.appendingPathComponent("a.txt").path), Data("alpha".utf8))
    }
}

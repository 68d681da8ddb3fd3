import Configuration
import Foundation
import XCTest

/// The config file and `-o key=value`, as the command line uses them (exit code 2 on any mistake).
final class ConfigurationCommandLineTests: CLITestCase {
    private var container: String { path("c.asice") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        let result = try asicfs(["create", container])
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    func testConfigFileWithKnownKeysIsAccepted() throws {
        let config = try write("asicfs.conf", """
            tsa-url = http://tsa.example/
            profile = B
            smart-id.relying-party-name = Test Party
            """)
        for arguments in [["--config", config], ["--config=\(config)"]] {
            let result = try asicfs(["ls", container, "--json"] + arguments)
            assertSuccess(result)
            XCTAssertEqual(result.stderr, "")
            XCTAssertNoThrow(try JSONSerialization.jsonObject(with: result.stdoutData))
        }
    }

    func testConfigFileWithCommentsAndBlankLinesIsAccepted() throws {
        let config = try write("asicfs.conf", """
            # asicfs settings

               # an indented comment
            tsa-url = http://tsa.example/#fragment
            \t
            profile=LT
            # bogus = 1 (commented out, so not an unknown key)

            """)
        let result = try asicfs(["ls", container, "--config", config])
        assertSuccess(result)
        XCTAssertEqual(result.stderr, "")
    }

    func testConfigFileWithCRLFLineEndsIsAccepted() throws {
        let config = try write("windows.conf", "profile = B\r\n\r\ntsa-url = http://tsa.example/\r\n")
        let result = try asicfs(["ls", container, "--config", config])
        assertSuccess(result)
        XCTAssertEqual(result.stderr, "")
    }

    func testUnknownKeyInCRLFConfigFileIsStillFoundOnItsLine() throws {
        // A comment on the first line must not swallow the rest of a CR LF file.
        let config = try write("windows.conf", "# saved on Windows\r\nbogus-key = 1\r\n")
        assertFailure(try asicfs(["ls", container, "--config", config]), status: 2,
                      mentions: ["\(config):2:", "'bogus-key'"])
    }

    func testUnknownKeyInConfigFileIsAUsageErrorNamingTheKeyFileAndLine() throws {
        let config = try write("asicfs.conf", "# comment\n\ntsa-url = http://tsa.example/\nbogus-key = 1\n")
        let result = try asicfs(["ls", container, "--config", config])
        assertFailure(result, status: 2, mentions: ["\(config):4:", "unknown configuration key", "'bogus-key'"])
        XCTAssertEqual(result.stdout, "")
    }

    func testLineWithoutEqualsInConfigFileIsAUsageErrorWithItsLine() throws {
        let config = try write("asicfs.conf", "profile = B\njust some words\n")
        assertFailure(try asicfs(["ls", container, "--config", config]), status: 2,
                      mentions: ["\(config):2:", "expected 'key = value'"])
    }

    func testInvalidValueInConfigFileIsAUsageError() throws {
        let config = try write("asicfs.conf", "profile = LTA\n")
        assertFailure(try asicfs(["ls", container, "--config", config]), status: 2,
                      mentions: ["\(config):1:", "'profile'", "'LTA'"])
    }

    func testUnknownKeyInOptionIsAUsageErrorNamingTheKey() throws {
        let result = try asicfs(["ls", container, "-o", "unknown=1"])
        assertFailure(result, status: 2, mentions: ["-o", "unknown configuration key", "'unknown'"])
        assertFailure(try asicfs(["ls", container, "--option=frob.nicate=2"]), status: 2, mentions: ["'frob.nicate'"])
    }

    func testOptionWithoutEqualsIsAUsageError() throws {
        assertFailure(try asicfs(["ls", container, "-o", "profile"]), status: 2, mentions: ["profile", "expected key=value"])
    }

    func testProfileOptionAcceptsOnlyLTOrB() throws {
        assertFailure(try asicfs(["ls", container, "-o", "profile=X"]), status: 2, mentions: ["'profile'", "'X'", "B, LT"])
        assertFailure(try asicfs(["ls", container, "-o", "profile=b"]), status: 2, mentions: ["'profile'"])
        for value in ["B", "LT"] {
            let result = try asicfs(["ls", container, "-o", "profile=\(value)"])
            assertSuccess(result)
            XCTAssertEqual(result.stderr, "")
        }
    }

    func testOptionsAreAppliedAfterTheFileAndCheckedTheSameWay() throws {
        // -o is applied after the file and checked the same way.
        let config = try write("asicfs.conf", "profile = B\n")
        assertSuccess(try asicfs(["ls", container, "--config", config, "-o", "profile=LT", "-o", "tsa-url=http://a/?b=c"]))
        assertFailure(try asicfs(["ls", container, "--config", config, "-o", "profile=LTA"]), status: 2, mentions: ["'LTA'"])
    }

    func testMissingConfigFileIsAUsageError() throws {
        let missing = path("no-such.conf")
        let result = try asicfs(["ls", container, "--config", missing])
        assertFailure(result, status: 2, mentions: ["cannot read config file", missing])
        XCTAssertEqual(result.stdout, "")
    }

    func testDefaultConfigFileUnderXDGConfigHomeIsRead() throws {
        let home = root.appendingPathComponent("xdg")
        let file = try write("asicfs/config", "# default settings\nprofile = B\nno.such-key = 1\n", in: home)
        let result = try asicfs(["ls", container], environment: ["XDG_CONFIG_HOME": home.path])
        assertFailure(result, status: 2, mentions: ["\(file):3:", "'no.such-key'"])
        XCTAssertEqual(result.stdout, "")

        // Once the file is fixed, the same command works.
        try write("asicfs/config", "# default settings\nprofile = B\n", in: home)
        let fixed = try asicfs(["ls", container], environment: ["XDG_CONFIG_HOME": home.path])
        assertSuccess(fixed)
        XCTAssertEqual(fixed.stderr, "")
    }

    func testDefaultConfigFileFallsBackToHomeDotConfig() throws {
        let home = root.appendingPathComponent("home")
        let file = try write(".config/asicfs/config", "bad-key-in-home = 1\n", in: home)
        let result = try asicfs(["ls", container], environment: ["XDG_CONFIG_HOME": "", "HOME": home.path])
        assertFailure(result, status: 2, mentions: ["\(file):1:", "'bad-key-in-home'"])
    }

    func testExplicitConfigFileReplacesTheDefaultOne() throws {
        try write("asicfs/config", "bad-default-key = 1\n", in: configHome)
        assertFailure(try asicfs(["ls", container]), status: 2, mentions: ["'bad-default-key'"])
        let config = try write("good.conf", "profile = LT\n")
        assertSuccess(try asicfs(["ls", container, "--config", config]))
    }

    func testHelpWorksEvenWhenTheConfigurationIsBroken() throws {
        try write("asicfs/config", "broken line without equals\n", in: configHome)
        assertFailure(try asicfs(["ls", container]), status: 2, mentions: ["expected 'key = value'"])
        for arguments in [["ls", "--help"], ["add", container, "--help"], ["help", "extract"], ["--help"], ["--version"]] {
            let result = try asicfs(arguments)
            assertSuccess(result)
            XCTAssertEqual(result.stderr, "", "\(arguments)")
            XCTAssertFalse(result.stdout.isEmpty, "\(arguments)")
        }
        // Even a missing --config file does not stop --help.
        let help = try asicfs(["ls", container, "--config", path("missing.conf"), "--help"])
        assertSuccess(help)
        XCTAssertTrue(help.stdout.hasPrefix("Usage: asicfs ls"), help.stdout)
    }

    func testMissingDefaultConfigFileIsFine() throws {
        XCTAssertFalse(FileManager.default.fileExists(atPath: configHome.appendingPathComponent("asicfs/config").path))
        let result = try asicfs(["ls", container])
        assertSuccess(result)
        XCTAssertEqual(result.stderr, "")
    }

    func testConfigurationErrorsStopEditsBeforeAnythingChanges() throws {
        try write("a.txt", "alpha")
        let before = try read(container)
        let config = try write("asicfs.conf", "typo-key = 1\n")
        assertFailure(try asicfs(["add", container, "a.txt", "--config", config]), status: 2, mentions: ["'typo-key'"])
        assertFailure(try asicfs(["add", container, "a.txt", "-o", "typo=1"]), status: 2, mentions: ["'typo'"])
        assertFailure(try asicfs(["create", path("new.asice"), "a.txt", "-o", "typo=1"]), status: 2, mentions: ["'typo'"])
        XCTAssertEqual(try read(container), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("new.asice")))
    }
}

/// `Configuration.load(explicitPath:overrides:environment:)` called directly.
final class ConfigurationLoadTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("asicfs-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    @discardableResult
    private func file(_ name: String, _ text: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// An environment whose default config file does not exist.
    private var emptyEnvironment: [String: String] {
        ["XDG_CONFIG_HOME": folder.appendingPathComponent("none").path, "ASICFS_SYSTEM_CONFIG": folder.appendingPathComponent("none-system").path]
    }

    private func loadError(_ body: () throws -> Configuration) -> String? {
        do {
            _ = try body()
            return nil
        } catch let error as ConfigurationError {
            return error.description
        } catch {
            return "unexpected error type: \(error)"
        }
    }

    func testExplicitFileIsReadWithCommentsBlankLinesAndWhitespace() throws {
        let path = try file("config", """
            # comment
              # indented comment
              tsa-url   =   http://tsa.example/path

            \tprofile\t=\tB\t
            proxy =
            remote.url = https://remote.example/csc/v2?x=1
            """)
        let configuration = try Configuration.load(explicitPath: path, overrides: [], environment: emptyEnvironment)
        XCTAssertEqual(configuration["tsa-url"], "http://tsa.example/path")
        XCTAssertEqual(configuration["profile"], "B")
        XCTAssertEqual(configuration["proxy"], "")
        XCTAssertEqual(configuration["remote.url"], "https://remote.example/csc/v2?x=1")
        XCTAssertNil(configuration["ocsp-url"])
        XCTAssertEqual(configuration.values.count, 4)
    }

    func testHashInsideAValueIsKept() throws {
        let path = try file("config", "# comment\nremote.url = https://remote.example/csc#v2\nproxy = http://p/ # not a comment\n")
        let configuration = try Configuration.load(explicitPath: path, overrides: [], environment: emptyEnvironment)
        XCTAssertEqual(configuration["remote.url"], "https://remote.example/csc#v2")
        XCTAssertEqual(configuration["proxy"], "http://p/ # not a comment")
    }

    func testCRLFLineEndsAreAccepted() throws {
        let path = try file("config", "# written on Windows\r\nprofile = B\r\n\r\ntsa-url = http://tsa/\r\n")
        let configuration = try Configuration.load(explicitPath: path, overrides: [], environment: emptyEnvironment)
        XCTAssertEqual(configuration["profile"], "B")
        XCTAssertEqual(configuration["tsa-url"], "http://tsa/")
        // Line numbers still count CR LF lines.
        let bad = try file("bad.conf", "profile = B\r\nnope = 1\r\n")
        let message = loadError { try Configuration.load(explicitPath: bad, overrides: [], environment: emptyEnvironment) }
        XCTAssertEqual(message, "\(bad):2: unknown configuration key 'nope'")
    }

    func testOverridesWinOverTheFileAndMayContainEquals() throws {
        let path = try file("config", "profile = B\ntsa-url = http://file/\n")
        let configuration = try Configuration.load(
            explicitPath: path, overrides: ["profile=LT", "ocsp-url=http://ocsp/?a=b=c", "profile=B", "tsa-url="],
            environment: emptyEnvironment)
        XCTAssertEqual(configuration["profile"], "B", "the last -o wins")
        XCTAssertEqual(configuration["ocsp-url"], "http://ocsp/?a=b=c")
        XCTAssertEqual(configuration["tsa-url"], "")
    }

    func testTheLastOccurrenceOfAKeyCounts() throws {
        let path = try file("config", "profile = B\ntsa-url = http://one/\nprofile = LT\ntsa-url = http://two/\n")
        let configuration = try Configuration.load(explicitPath: path, overrides: [], environment: emptyEnvironment)
        XCTAssertEqual(configuration["profile"], "LT")
        XCTAssertEqual(configuration["tsa-url"], "http://two/")
    }

    func testNoFileAndNoOverridesGiveAnEmptyConfiguration() throws {
        let configuration = try Configuration.load(explicitPath: nil, overrides: [], environment: emptyEnvironment)
        XCTAssertEqual(configuration, Configuration())
        XCTAssertTrue(configuration.values.isEmpty)
    }

    func testDefaultFileComesFromXDGConfigHome() throws {
        try file("xdg/asicfs/config", "profile = B\n")
        let environment = ["XDG_CONFIG_HOME": folder.appendingPathComponent("xdg").path, "HOME": "/nonexistent"]
        XCTAssertEqual(Configuration.defaultPath(environment: environment),
                       folder.appendingPathComponent("xdg/asicfs/config").path)
        let configuration = try Configuration.load(explicitPath: nil, overrides: [], environment: environment)
        XCTAssertEqual(configuration["profile"], "B")
    }

    func testDefaultFileFallsBackToHomeWhenXDGIsUnsetOrEmpty() throws {
        try file("home/.config/asicfs/config", "tsa-url = http://home/\n")
        let home = folder.appendingPathComponent("home").path
        for environment in [["HOME": home], ["HOME": home, "XDG_CONFIG_HOME": ""]] {
            XCTAssertEqual(Configuration.defaultPath(environment: environment), home + "/.config/asicfs/config")
            let configuration = try Configuration.load(explicitPath: nil, overrides: [], environment: environment)
            XCTAssertEqual(configuration["tsa-url"], "http://home/")
        }
    }

    func testExplicitPathIsUsedInsteadOfTheDefaultFile() throws {
        try file("xdg/asicfs/config", "unknown-default = 1\n")
        let explicit = try file("explicit.conf", "profile = LT\n")
        let environment = ["XDG_CONFIG_HOME": folder.appendingPathComponent("xdg").path]
        let configuration = try Configuration.load(explicitPath: explicit, overrides: [], environment: environment)
        XCTAssertEqual(configuration["profile"], "LT")
        XCTAssertNotNil(loadError { try Configuration.load(explicitPath: nil, overrides: [], environment: environment) })
    }

    /// `/etc/asicfs/config` (or ASICFS_SYSTEM_CONFIG) first, then the user's file, then `-o`;
    /// an explicit --config file is read instead of both.
    func testTheSystemWideFileComesBeforeTheUsersAndOptions() throws {
        let system = try file("etc/asicfs/config", "tsa-url = http://system/\nprofile = B\nocsp-url = http://system-ocsp/\n")
        try file("xdg/asicfs/config", "tsa-url = http://user/\n")
        let environment = ["ASICFS_SYSTEM_CONFIG": system, "XDG_CONFIG_HOME": folder.appendingPathComponent("xdg").path]
        XCTAssertEqual(Configuration.systemPath(environment: environment), system)
        XCTAssertEqual(Configuration.systemPath(environment: [:]), "/etc/asicfs/config")
        let configuration = try Configuration.load(explicitPath: nil, overrides: ["ocsp-url=http://option/"], environment: environment)
        XCTAssertEqual(configuration["profile"], "B", "from the system file")
        XCTAssertEqual(configuration["tsa-url"], "http://user/", "the user's file wins over the system's")
        XCTAssertEqual(configuration["ocsp-url"], "http://option/", "-o wins over both")

        let explicit = try file("explicit.conf", "tsa-url = http://explicit/\n")
        let replaced = try Configuration.load(explicitPath: explicit, overrides: [], environment: environment)
        XCTAssertEqual(replaced["tsa-url"], "http://explicit/")
        XCTAssertNil(replaced["profile"], "--config is read instead of the system file too")

        try file("etc/asicfs/config", "no-such-key = 1\n")
        XCTAssertEqual(loadError { try Configuration.load(explicitPath: nil, overrides: [], environment: environment) },
                       "\(system):1: unknown configuration key 'no-such-key'")
        XCTAssertNil(loadError { try Configuration.load(explicitPath: nil, overrides: [],
                                                        environment: ["ASICFS_SYSTEM_CONFIG": folder.appendingPathComponent("none").path]) },
                     "an absent system file is fine")
    }

    func testMissingExplicitFileIsAnError() {
        let missing = folder.appendingPathComponent("missing.conf").path
        let message = loadError { try Configuration.load(explicitPath: missing, overrides: [], environment: emptyEnvironment) }
        XCTAssertEqual(message, "cannot read config file \(missing)")
    }

    func testUnknownKeyInFileNamesTheKeyFileAndLine() throws {
        let path = try file("config", "# one\n\nprofile = B\n  colour = blue  \n")
        let message = loadError { try Configuration.load(explicitPath: path, overrides: [], environment: emptyEnvironment) }
        XCTAssertEqual(message, "\(path):4: unknown configuration key 'colour'")
    }

    func testUnknownKeyInDefaultFileNamesThatFile() throws {
        let path = try file("xdg/asicfs/config", "\n\n\nsmart-id.urll = x\n")
        let environment = ["XDG_CONFIG_HOME": folder.appendingPathComponent("xdg").path]
        let message = loadError { try Configuration.load(explicitPath: nil, overrides: [], environment: environment) }
        XCTAssertEqual(message, "\(path):4: unknown configuration key 'smart-id.urll'; did you mean 'smart-id.url'?")
    }

    func testLineWithoutEqualsIsAnErrorWithItsLineNumber() throws {
        let path = try file("config", "profile = B\n\nnonsense\n")
        let message = loadError { try Configuration.load(explicitPath: path, overrides: [], environment: emptyEnvironment) }
        XCTAssertEqual(message, "\(path):3: expected 'key = value'")
    }

    func testUnknownKeyInOverrideIsAnError() {
        let message = loadError { try Configuration.load(explicitPath: nil, overrides: ["unknown=1"], environment: emptyEnvironment) }
        XCTAssertEqual(message, "-o: unknown configuration key 'unknown'")
    }

    func testOverrideWithoutEqualsIsAnError() {
        let message = loadError { try Configuration.load(explicitPath: nil, overrides: ["profile"], environment: emptyEnvironment) }
        XCTAssertEqual(message, "-o profile: expected key=value")
    }

    func testProfileAcceptsOnlyLTAndB() throws {
        for value in ["LT", "B"] {
            let configuration = try Configuration.load(explicitPath: nil, overrides: ["profile=\(value)"],
                                                       environment: emptyEnvironment)
            XCTAssertEqual(configuration["profile"], value)
        }
        for value in ["X", "lt", "", "LTA"] {
            let message = loadError {
                try Configuration.load(explicitPath: nil, overrides: ["profile=\(value)"], environment: emptyEnvironment)
            }
            XCTAssertEqual(message, "-o: 'profile' must be one of B, LT, not '\(value)'")
        }
        let path = try file("config", "profile = X\n")
        let message = loadError { try Configuration.load(explicitPath: path, overrides: [], environment: emptyEnvironment) }
        XCTAssertEqual(message, "\(path):1: 'profile' must be one of B, LT, not 'X'")
    }

    func testErrorInFileWinsEvenWhenAnOverrideWouldFixIt() throws {
        let path = try file("config", "profile = X\n")
        XCTAssertNotNil(loadError {
            try Configuration.load(explicitPath: path, overrides: ["profile=B"], environment: emptyEnvironment)
        })
    }

    func testNonUTF8FileIsAnError() throws {
        let url = folder.appendingPathComponent("latin1.conf")
        try Data([0x70, 0x72, 0x6F, 0x78, 0x79, 0x20, 0x3D, 0x20, 0xE9, 0xFF, 0x0A]).write(to: url)
        let message = loadError { try Configuration.load(explicitPath: url.path, overrides: [], environment: emptyEnvironment) }
        XCTAssertEqual(message, "\(url.path): not UTF-8 text")
    }

    func testEveryDocumentedKeyIsAccepted() throws {
        XCTAssertEqual(Configuration.keys.count, Configuration.knownKeys.count, "a key is listed twice")
        var text = ""
        for (index, entry) in Configuration.keys.enumerated() {
            let fixed = ["smart-id.api": "v3", "smart-id.signature-algorithm": "pss"]
            let value = fixed[entry.key] ?? (entry.key == "profile" ? "B" : entry.key == "notify" || entry.key == "demo" ? "no"
                : entry.key.hasSuffix(".timeout") ? "\(index)" : entry.key == "ocsp-tm-policy" ? "1.2.\(index)" : "value-\(index)")
            text += "\(entry.key) = \(value)\n"
        }
        let path = try file("config", text)
        let configuration = try Configuration.load(explicitPath: path, overrides: [], environment: emptyEnvironment)
        XCTAssertEqual(Set(configuration.values.keys), Configuration.knownKeys)
        XCTAssertEqual(configuration["pinentry"], "value-\(Configuration.keys.firstIndex { $0.key == "pinentry" }!)")
    }

    /// A mount's daemon runs in `/`: relative paths are made absolute when the settings are read,
    /// against the config file's folder, or the working folder for `-o`.
    func testRelativePathsBecomeAbsolute() throws {
        let path = try file("config", "tsl-cert = certs/tsl.pem\ntrust-anchors = ./anchors\ntsl = https://example.org/lotl.xml\n")
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let configuration = try Configuration.load(explicitPath: path, overrides: ["cache-dir=cache", "tsa-url=relative"],
                                                   environment: emptyEnvironment)
        XCTAssertEqual(configuration["tsl-cert"], folder + "/certs/tsl.pem")
        XCTAssertEqual(configuration["trust-anchors"], folder + "/anchors")
        XCTAssertEqual(configuration["tsl"], "https://example.org/lotl.xml")
        XCTAssertEqual(configuration["cache-dir"], FileManager.default.currentDirectoryPath + "/cache")
        XCTAssertEqual(configuration["tsa-url"], "relative", "only path settings change")
        XCTAssertEqual(try Configuration.load(explicitPath: nil, overrides: ["tsl=none"], environment: emptyEnvironment)["tsl"], "none")
    }

    /// `~/` is the home folder of the environment the settings are read in ($HOME), as a shell
    /// would expand it; without HOME, the password database's.
    func testTildeIsHomeFromTheEnvironment() throws {
        let home = "/home/someone-else"
        var environment = emptyEnvironment
        environment["HOME"] = home
        let path = try file("config", "tsl-cert = ~/tsl.pem\n")
        let configuration = try Configuration.load(explicitPath: path, overrides: ["trust-anchors=~/anchors"], environment: environment)
        XCTAssertEqual(configuration["tsl-cert"], home + "/tsl.pem")
        XCTAssertEqual(configuration["trust-anchors"], home + "/anchors")

        let entry = try XCTUnwrap(getpwuid(getuid()), "this user's password database entry")
        let passwd = String(cString: try XCTUnwrap(entry.pointee.pw_dir))
        for withoutHome in [emptyEnvironment, emptyEnvironment.merging(["HOME": ""]) { $1 }] {
            let fallback = try Configuration.load(explicitPath: nil, overrides: ["tsl-cert=~/tsl.pem"], environment: withoutHome)
            XCTAssertEqual(fallback["tsl-cert"], passwd + "/tsl.pem")
        }
    }

    func testTimeoutsAndNotifyOnlyTakeTheirValues() throws {
        for (key, value, why) in [("mobile-id.timeout", "soon", "a number of seconds from 1 to 3600"),
                                  ("smart-id.timeout", "0", "a number of seconds from 1 to 3600"),
                                  ("notify", "maybe", "one of no, yes")] {
            XCTAssertThrowsError(try Configuration.load(explicitPath: try file("config-\(key)", "\(key) = \(value)\n"),
                                                        overrides: [], environment: emptyEnvironment)) { error in
                XCTAssertTrue("\(error)".contains("'\(key)' must be \(why), not '\(value)'"), "\(error)")
            }
        }
        let fine = try Configuration.load(explicitPath: nil, overrides: ["mobile-id.timeout=90", "notify=no"],
                                          environment: emptyEnvironment)
        XCTAssertEqual(fine["mobile-id.timeout"], "90")
    }
}

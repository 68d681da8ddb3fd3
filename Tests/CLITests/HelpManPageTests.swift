import Foundation
import XCTest

/// `asicfs --help` and man/asicfs.1 name the same commands, the same options per command, the
/// same global options and the same settings, both ways. Each failure names what is missing
/// where, so that adding an option to one and not the other fails here.
final class HelpManPageTests: CLITestCase {
    /// Options every command takes: the man page lists them once, under GLOBAL OPTIONS.
    static let globalOptions: Set<String> = ["--config", "-o", "--option", "-q", "--quiet", "-h", "--help"]

    var man: ManPage!

    override func setUpWithError() throws {
        try super.setUpWithError()
        man = try ManPage(path: Self.packageRoot.appendingPathComponent("man/asicfs.1").path)
    }

    func help(_ arguments: [String]) throws -> String {
        let result = try asicfs(arguments + ["--help"])
        XCTAssertEqual(result.status, 0, "asicfs \(arguments) --help: \(result.stderr)")
        return result.stdout
    }

    /// The commands of `asicfs --help`: the first word of each line under "Commands:".
    func helpCommands() throws -> [String] {
        HelpText(try help([])).lines(under: "Commands:").compactMap { line in
            // A command starts two spaces in; its description's continuation lines start further in.
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }
            let word = line.drop(while: { $0 == " " }).prefix(while: { $0.isLetter || $0 == "-" })
            return word.isEmpty ? nil : String(word)
        }
    }

    func testEveryCommandOfTheHelpIsInTheManPageAndBack() throws {
        let fromHelp = Set(try helpCommands())
        XCTAssertGreaterThan(fromHelp.count, 10, "the Commands: list of asicfs --help was not found")
        // `asicfs help [COMMAND]` is another spelling of --help: the SYNOPSIS shows it, --help does not list it.
        XCTAssertEqual(try asicfs(["help", "ls"]).status, 0, "asicfs help ls")
        let synopsis = man.synopsisCommands().subtracting(["help"])
        let described = Set(man.commandEntries().map(\.name)).subtracting(["help"])
        for command in fromHelp.subtracting(synopsis).sorted() {
            XCTFail("'\(command)' is in asicfs --help but not in the man page's SYNOPSIS")
        }
        for command in synopsis.subtracting(fromHelp).sorted() {
            XCTFail("'\(command)' is in the man page's SYNOPSIS but not in asicfs --help")
        }
        for command in fromHelp.subtracting(described).sorted() {
            XCTFail("'\(command)' is in asicfs --help but has no entry in the man page's COMMANDS")
        }
        for command in described.subtracting(fromHelp).sorted() {
            XCTFail("'\(command)' has an entry in the man page's COMMANDS but is not in asicfs --help")
        }
    }

    /// Each command's options (`asicfs COMMAND --help`, "Options:") against its entry in COMMANDS:
    /// the options in the entry's first line and in its indented option items (`.TP`).
    func testEveryCommandsOptionsAreTheManPagesAndBack() throws {
        let entries = man.commandEntries()
        XCTAssertGreaterThan(entries.count, 10, "no command entries found in the man page's COMMANDS")
        for command in Set(entries.map(\.name)).subtracting(["help"]).sorted() {
            let fromHelp = HelpText(try help([command])).options().subtracting(Self.globalOptions)
            let fromMan = entries.filter { $0.name == command }
                .reduce(into: Set<String>()) { $0.formUnion($1.options) }.subtracting(Self.globalOptions)
            for option in fromHelp.subtracting(fromMan).sorted() {
                XCTFail("\(command): \(option) is in 'asicfs \(command) --help' but not among the man page's options of \(command)")
            }
            for option in fromMan.subtracting(fromHelp).sorted() {
                XCTFail("\(command): \(option) is among the man page's options of \(command) but not in 'asicfs \(command) --help'")
            }
        }
    }

    /// The options every command takes (listed by every command's help) are GLOBAL OPTIONS' items.
    func testTheGlobalOptionsAreTheManPagesAndBack() throws {
        var common: Set<String>?
        for command in try helpCommands() {
            let options = HelpText(try help([command])).options()
            common = common.map { $0.intersection(options) } ?? options
        }
        let fromHelp = try XCTUnwrap(common)
        let fromMan = man.optionItems(inSection: "GLOBAL OPTIONS")
        for option in fromHelp.subtracting(fromMan).sorted() {
            XCTFail("\(option) is taken by every command (asicfs COMMAND --help) but not in the man page's GLOBAL OPTIONS")
        }
        // --version/-V and --verbose/-v are options of asicfs itself, not of a command.
        for option in fromMan.subtracting(fromHelp).subtracting(["--version", "-V", "--verbose", "-v"]).sorted() {
            XCTFail("\(option) is in the man page's GLOBAL OPTIONS but not taken by every command")
        }
    }

    func testTheSettingsOfTheHelpAreTheManPagesAndBack() throws {
        let fromHelp = Set(HelpText(try help([])).lines(under: "Settings").compactMap { line -> String? in
            guard line.hasPrefix("  ") else { return nil }
            return line.split(separator: " ").first.map(String.init)
        })
        XCTAssertGreaterThan(fromHelp.count, 20, "the Settings list of asicfs --help was not found")
        let fromMan = man.itemNames(inSection: "CONFIGURATION")
        for key in fromHelp.subtracting(fromMan).sorted() {
            XCTFail("setting '\(key)' is in asicfs --help but not an item of the man page's CONFIGURATION")
        }
        for key in fromMan.subtracting(fromHelp).sorted() {
            XCTFail("setting '\(key)' is an item of the man page's CONFIGURATION but not in asicfs --help")
        }
    }

    /// The parsers themselves, on a small page, so that a parser that finds nothing cannot pass.
    func testTheParsersFindWhatASmallPageAndHelpHold() throws {
        let page = ManPage(text: """
            .SH SYNOPSIS
            .B asicfs ls
            .I CONTAINER
            .SH COMMANDS
            .TP
            .B ls \\fICONTAINER\\fP \\fR[\\fP\\-\\-json\\fR]\\fP
            Lists, see \\-\\-other in the text.
            .TP
            .BR \\-d ", " \\-\\-directory " \\fIDIR\\fP"
            where.
            .SH CONFIGURATION
            .TP
            .BR a\\-b ", " c.d
            two keys.
            """)
        XCTAssertEqual(page.synopsisCommands(), ["ls"])
        XCTAssertEqual(page.commandEntries().map(\.name), ["ls"])
        XCTAssertEqual(page.commandEntries().first?.options, ["--json", "-d", "--directory"])
        XCTAssertEqual(page.itemNames(inSection: "CONFIGURATION"), ["a-b", "c.d"])
        let help = HelpText("Usage: x\n\nOptions:\n  -d, --directory VALUE    where\n  --json                   json\n")
        XCTAssertEqual(help.options(), ["-d", "--directory", "--json"])
    }
}

/// The parts of man/asicfs.1 the test compares: SYNOPSIS lines, the COMMANDS entries and the
/// items (`.TP` then one line) of a section, with troff's escapes and fonts taken out.
struct ManPage {
    struct CommandEntry {
        let name: String
        /// Options in the entry's first line and in its option items.
        let options: Set<String>
    }

    let lines: [String]

    init(path: String) throws { self.init(text: try String(contentsOfFile: path, encoding: .utf8)) }
    init(text: String) { lines = text.components(separatedBy: "\n") }

    /// `\fB`, `\fI`, `\fR`, `\fP`, `\-`, `\&` and quotes out: what the reader sees.
    static func plain(_ line: String) -> String {
        var text = line
        for font in ["\\fB", "\\fI", "\\fR", "\\fP"] { text = text.replacingOccurrences(of: font, with: "") }
        return text.replacingOccurrences(of: "\\-", with: "-").replacingOccurrences(of: "\\&", with: "")
            .replacingOccurrences(of: "\"", with: "")
    }

    func section(_ name: String) -> [String] {
        var inside = false
        var found: [String] = []
        for line in lines {
            if line.hasPrefix(".SH ") {
                inside = Self.plain(String(line.dropFirst(4))).trimmingCharacters(in: .whitespaces) == name
                continue
            }
            if inside { found.append(line) }
        }
        return found
    }

    /// The word after `.B asicfs` on each SYNOPSIS line.
    func synopsisCommands() -> Set<String> {
        Set(section("SYNOPSIS").compactMap { line in
            let words = Self.plain(line).split(separator: " ")
            guard words.count >= 3, words[0] == ".B", words[1] == "asicfs", words[2].first?.isLetter == true else { return nil }
            return String(words[2])
        })
    }

    /// The first line after each `.TP` of a section, as plain text without its macro.
    func items(inSection name: String) -> [String] {
        let body = section(name)
        return body.indices.dropLast().filter { body[$0].hasPrefix(".TP") }.map { index in
            let line = Self.plain(body[index + 1])
            return line.hasPrefix(".") ? String(line.drop(while: { $0 != " " }).dropFirst()) : line
        }
    }

    /// Every word of the section's items, separated by ", " (`.BR a ", " b` names a and b).
    func itemNames(inSection name: String) -> Set<String> {
        Set(items(inSection: name).flatMap { item in
            item.components(separatedBy: ",").compactMap { $0.split(separator: " ").first.map(String.init) }
        })
    }

    func optionItems(inSection name: String) -> Set<String> {
        Set(items(inSection: name).flatMap(Self.options(in:)))
    }

    /// COMMANDS: an item whose first word is a lower-case name starts a command's entry; the
    /// items that start with `-` until the next command are its options.
    func commandEntries() -> [CommandEntry] {
        var entries: [CommandEntry] = []
        var name: String?
        var options: Set<String> = []
        for item in items(inSection: "COMMANDS") {
            let first = item.split(separator: " ").first.map(String.init) ?? ""
            if first.first?.isLowercase == true, first.allSatisfy({ $0.isLowercase || $0 == "-" }) {
                if let name { entries.append(CommandEntry(name: name, options: options)) }
                name = first
                options = Set(Self.options(in: item))
            } else if first.hasPrefix("-") {
                options.formUnion(Self.options(in: item))
            }
        }
        if let name { entries.append(CommandEntry(name: name, options: options)) }
        return entries
    }

    /// `-x` and `--long-name` words of a line (not a `-` inside a word, nor `-1`).
    static func options(in text: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: "(?<![\\w-])--?[A-Za-z][A-Za-z0-9-]*")
        let range = NSRange(text.startIndex..., in: text)
        return pattern.matches(in: text, range: range).compactMap { Range($0.range, in: text).map { String(text[$0]) } }
    }
}

/// The parts of a `--help` text the test compares.
struct HelpText {
    let text: String
    init(_ text: String) { self.text = text }

    /// The lines after the first line starting with `heading`, up to the next blank line.
    func lines(under heading: String) -> [String] {
        let all = text.components(separatedBy: "\n")
        guard let start = all.firstIndex(where: { $0.hasPrefix(heading) }) else { return [] }
        return Array(all[(start + 1)...].prefix(while: { !$0.isEmpty }))
    }

    /// The option names of the "Options:" list (the part of each line before its description).
    func options() -> Set<String> {
        Set(lines(under: "Options:").filter { $0.hasPrefix("  -") }.flatMap { line in
            let names = line.trimmingCharacters(in: .whitespaces).components(separatedBy: "  ").first ?? ""
            return ManPage.options(in: names)
        })
    }
}

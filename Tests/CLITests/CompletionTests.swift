import Foundation
import XCTest

/// contrib/completions in the real shells (bash without the bash-completion package, zsh's
/// completion system driven through a pseudo-terminal, fish's `complete -C`): the candidates
/// for a signing method's key= parameters and for -o settings.
final class CompletionTests: CLITestCase {
    static let completions = packageRoot.appendingPathComponent("contrib/completions").path

    /// An empty folder to complete in, so that no file name joins the candidates.
    func emptyFolder() throws -> URL {
        let folder = work.appendingPathComponent("empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// What bash's completion function offers for the words (the last one being completed).
    func bash(_ words: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let script = """
            source \(Self.completions)/asicfs.bash
            COMP_WORDS=(\(quoted)); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
            _asicfs asicfs "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try runTool("/bin/bash", ["--norc", "--noprofile", "-c", script], in: try emptyFolder())
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        XCTAssertEqual(result.stderr, "", "no '_init_completion: command not found' without bash-completion", file: file, line: line)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    /// What zsh's completion system (compinit, the _asicfs function) offers for LINE<TAB>: an
    /// interactive zsh in a zsh/zpty pseudo-terminal, with compadd wrapped to print every match
    /// and TAB bound to a widget that says when the completion is done (no waiting on time).
    func zsh(_ commandLine: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let script = try write("capture-\(UUID().uuidString).zsh", #"""
            zmodload zsh/zpty
            out=''
            # Reads the shell's output until TEXT shows (markers are typed split by "" so that
            # only their output matches, not their echo).
            upto() { local chunk; while zpty -r z chunk; do out+=$chunk; [[ $out == *"$1"* ]] && return 0; done; return 1 }
            zpty z zsh -f -i
            zpty -w z "PROMPT='%% '; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D; print __rea""dy__"
            upto __ready__
            zpty -w z 'compadd () { local -a hits; builtin compadd -O hits "$@"; (( $#hits )) && print -r -l -- "<match>"${^hits}"</match>"; builtin compadd "$@" }'
            zpty -w z 'complete-and-tell () { _main_complete; print -r -- "<do""ne>" }; zle -C complete-and-tell complete-word complete-and-tell; bindkey "^I" complete-and-tell; print __def""ined__'
            upto __defined__
            out=''
            zpty -w -n z "$2"$'\t'
            upto '<done>'
            zpty -w -n z $'\C-e\C-u'
            zpty -w z 'print __fin""ished__'
            upto __finished__
            zpty -d z
            print -r -- "$out"
            """#)
        let result = try runTool("/usr/bin/zsh", ["-f", script, Self.completions, commandLine], in: try emptyFolder(), timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        XCTAssertTrue(result.stdout.contains("<done>"), "the completion ran: \(result.stdout)", file: file, line: line)
        let matches = try NSRegularExpression(pattern: "<match>(.*?)</match>")
        let text = result.stdout as NSString
        return matches.matches(in: result.stdout, range: NSRange(location: 0, length: text.length)).map { text.substring(with: $0.range(at: 1)) }
    }

    /// What fish offers (`complete -C`), without its descriptions.
    func fish(_ commandLine: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let result = try runTool("/usr/bin/fish", ["--no-config", "-c", "source \(Self.completions)/asicfs.fish; complete -C\(shellQuoted(commandLine))"],
                                 in: try emptyFolder())
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        XCTAssertEqual(result.stderr, "", file: file, line: line)
        return result.stdout.split(separator: "\n").map { String($0.split(separator: "\t", maxSplits: 1)[0]) }
    }

    func shellQuoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "\\'") + "'" }

    static let tsSettings: Set = ["tsa-url=", "tsl=", "tsl-cert=", "tsl-signer-sha256="]

    func testBashCompletesParametersAndSettingsWithoutBashCompletion() throws {
        XCTAssertEqual(try bash(["asicfs", "sign", "x", "--method", "pkcs12", "fi"]), ["file="])
        XCTAssertEqual(Set(try bash(["asicfs", "verify", "-o", "ts"])), Self.tsSettings)
        XCTAssertEqual(try bash(["asicfs", "verify", "--warnings", "w"]), ["warning"])
        XCTAssertEqual(try bash(["asicfs", "ver"]), ["verify"])
        // Every setting --help lists is offered after -o, and nothing else.
        let help = try asicfs(["--help"]).stdout
        let settings = help.components(separatedBy: "\nSettings")[1].split(separator: "\n").dropFirst()
            .compactMap { $0.hasPrefix("  ") ? $0.split(separator: " ").first.map { String($0) + "=" } : nil }
        XCTAssertFalse(settings.isEmpty)
        XCTAssertEqual(Set(try bash(["asicfs", "ls", "-o", ""])), Set(settings))
        XCTAssertEqual(try bash(["asicfs", "decrypt", "x.cdoc", "--method", "key", "key-"]), ["key-file="])
        XCTAssertEqual(Set(try bash(["asicfs", "decrypt", "x.cdoc", "--method", ""])), Self.decryptionMethods)
        XCTAssertEqual(try bash(["asicfs", "encrypt", "o.cdoc", "--format", "cdoc2"]), ["cdoc2"])
        XCTAssertEqual(try bash(["asicfs", "decr"]), ["decrypt"])
    }

    static let decryptionMethods: Set = ["id-card", "pkcs11", "pkcs12", "key", "secret", "password"]

    func testEveryCompletionKnowsTheDecryptionMethodsAndTheirParameters() throws {
        XCTAssertEqual(try zsh("asicfs decrypt x.cdoc --method secret secret-"), ["secret-file="])
        XCTAssertEqual(Set(try zsh("asicfs decrypt x.cdoc --method ")), Self.decryptionMethods)
        XCTAssertEqual(try fish("asicfs decrypt x.cdoc --method password password-"), ["password-fd=", "password-file="].sorted())
        XCTAssertEqual(Set(try fish("asicfs decrypt x.cdoc --method ")), Self.decryptionMethods)
        XCTAssertEqual(try fish("asicfs encrypt o.cdoc a --format cdoc1"), ["cdoc1.0"])
    }

    func testZshCompletesParametersAndSettings() throws {
        XCTAssertEqual(try zsh("asicfs sign x --method pkcs12 fi"), ["file="])
        XCTAssertEqual(Set(try zsh("asicfs verify -o ts")), Self.tsSettings)
    }

    func testFishCompletesParametersAndSettings() throws {
        XCTAssertEqual(try fish("asicfs sign x --method pkcs12 fi"), ["file="])
        XCTAssertEqual(Set(try fish("asicfs verify -o ts")), Self.tsSettings)
    }
}

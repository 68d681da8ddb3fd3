import Foundation

/// The marked shell examples of a Markdown file, and how an example's shown output is compared
/// with what a run printed.
///
/// Marking (README.md's Development section points here): an HTML comment `<!-- example -->`, or
/// `<!-- example: SETUP ... -->` naming the setups the example needs (see
/// `DocumentationExampleTests.prepare`), on the line right before a fenced block.
/// - A ```` ```sh ```` block is a script: it runs whole under `bash -e` and must exit 0.
/// - A ```` ``` ```` or ```` ```console ```` block is a transcript: each `$ ` line is a command
///   and the lines up to the next `$ ` line are what it prints (stdout and stderr together).
///   A command whose shown output has a line starting with `asicfs: `, `failed: ` or the
///   command's own name and `: ` (`rm: cannot remove …`), the line `Result: INDETERMINATE`
///   or `Result: INVALID`, or JSON's `"ok" : false`, must exit non-zero; every other command
///   must exit 0. A shown line that is only `…` stands for any number of lines, and `…` in a
///   line for any text; times, loopback ports and verification codes may differ.
/// Examples that need a real ID-card, a phone or an outside service stay unmarked.
struct DocumentationExample {
    enum Kind: Equatable { case script, transcript }

    struct Command: Equatable {
        let line: String
        let expected: [String]

        /// Whether the shown output says the command fails.
        var expectsFailure: Bool {
            let name = line.split(separator: " ").first.map { String($0) + ": " } ?? "asicfs: "
            return expected.contains {
                $0.hasPrefix("asicfs: ") || $0.hasPrefix("failed: ") || $0.hasPrefix(name)
                    || $0 == "Result: INDETERMINATE" || $0 == "Result: INVALID"
                    || $0.trimmingCharacters(in: .whitespaces).hasPrefix(#""ok" : false"#)
            }
        }
    }

    let file: String
    /// 1-based line of the opening fence.
    let line: Int
    let setups: [String]
    let kind: Kind
    let body: [String]

    var commands: [Command] {
        var commands: [Command] = []
        var current: (line: String, expected: [String])?
        for text in body {
            if text.hasPrefix("$ ") {
                if let current { commands.append(Command(line: current.line, expected: current.expected)) }
                current = (String(text.dropFirst(2)), [])
            } else {
                current?.expected.append(text)
            }
        }
        if let current { commands.append(Command(line: current.line, expected: current.expected)) }
        return commands
    }

    /// Every marked block of `text`; a marker not followed by a fenced block, or a transcript
    /// that does not start with a `$ ` line, is an error.
    static func parse(_ text: String, file: String) throws -> [DocumentationExample] {
        let lines = text.components(separatedBy: "\n")
        var examples: [DocumentationExample] = []
        var index = 0
        while index < lines.count {
            defer { index += 1 }
            let trimmed = lines[index].trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("<!-- example"), trimmed.hasSuffix("-->") else { continue }
            let inner = trimmed.dropFirst("<!-- example".count).dropLast(3).trimmingCharacters(in: .whitespaces)
            guard inner.isEmpty || inner.hasPrefix(":") else {
                throw ExampleError("\(file):\(index + 1): a marker is <!-- example --> or <!-- example: SETUP ... -->")
            }
            let setups = inner.dropFirst(inner.isEmpty ? 0 : 1).split(separator: " ").map(String.init)
            let fenceLine = index + 1
            guard fenceLine < lines.count else { throw ExampleError("\(file):\(index + 1): a marker at the end of the file") }
            let fence = lines[fenceLine]
            let indent = fence.prefix(while: { $0 == " " })
            let info = fence.dropFirst(indent.count)
            guard info.hasPrefix("```") else {
                throw ExampleError("\(file):\(index + 1): the marker is not followed by a fenced block")
            }
            let language = info.dropFirst(3).trimmingCharacters(in: .whitespaces)
            var body: [String] = []
            var end = fenceLine + 1
            while end < lines.count, lines[end].trimmingCharacters(in: .whitespaces) != "```" {
                body.append(lines[end].hasPrefix(indent) ? String(lines[end].dropFirst(indent.count)) : lines[end])
                end += 1
            }
            guard end < lines.count else { throw ExampleError("\(file):\(fenceLine + 1): the block is not closed") }
            let kind: Kind = language == "sh" ? .script : .transcript
            if kind == .transcript, body.first?.hasPrefix("$ ") != true {
                throw ExampleError("\(file):\(fenceLine + 1): a marked transcript starts with a '$ ' line")
            }
            examples.append(DocumentationExample(file: file, line: fenceLine + 1, setups: setups, kind: kind, body: body))
            index = end
        }
        return examples
    }

    /// What differs between the shown output and the printed one, or nil when they agree.
    /// Compared line by line after `normalized`; `…` in a shown line stands for any text.
    /// A shown line that is only `…` (indented or not) stands for any number of lines.
    static func difference(expected: [String], actual: [String]) -> String? {
        let shown = expected.map(normalized), printed = actual.map(normalized)
        var firstMismatch: (shown: Int, printed: Int)?
        /// Whether shown[i...] matches printed[j...]; remembers the furthest mismatch for the message.
        func match(_ i: Int, _ j: Int) -> Bool {
            if i == shown.count { if j == printed.count { return true } } else if shown[i].trimmingCharacters(in: .whitespaces) == "…" {
                return (j...printed.count).contains { match(i + 1, $0) }
            } else if j < printed.count, matches(shown[i], printed[j]) {
                return match(i + 1, j + 1)
            }
            if firstMismatch.map({ j > $0.printed }) ?? true { firstMismatch = (i, j) }
            return false
        }
        guard !match(0, 0), let (i, j) = firstMismatch else { return nil }
        let want = i < shown.count ? "'\(shown[i])'" : "nothing", got = j < printed.count ? "'\(printed[j])'" : "nothing"
        return "line \(j + 1): shown \(want), printed \(got)"
    }

    /// What changes from run to run is made the same on both sides: times and dates, loopback
    /// ports and verification codes; trailing blanks go.
    static func normalized(_ line: String) -> String {
        var text = line
        let rules: [(String, String)] = [
            (#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"#, "TIME"),
            (#"\d{4}-\d\d-\d\d \d\d:\d\d"#, "TIME"),
            (#"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d ( \d{4}|\d\d:\d\d)"#, "TIME"),
            (#"127\.0\.0\.1:\d+"#, "127.0.0.1:PORT"),
            (#"verification code: \d{4}"#, "verification code: NNNN"),
            (#"the code \d{4}"#, "the code NNNN"),
            (#""verification_code":"\d{4}""#, #""verification_code":"NNNN""#),
        ]
        for (pattern, replacement) in rules {
            text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        while text.last == " " { text.removeLast() }
        return text
    }

    static func matches(_ shown: String, _ printed: String) -> Bool {
        guard shown.contains("…") else { return shown == printed }
        let pattern = shown.components(separatedBy: "…").map(NSRegularExpression.escapedPattern(for:)).joined(separator: ".*")
        return printed.range(of: "^" + pattern + "$", options: .regularExpression) != nil
    }
}

struct ExampleError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

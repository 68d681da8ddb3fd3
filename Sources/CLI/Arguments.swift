/// A command's options, as the parser needs them.
struct OptionSpec: Sendable {
    /// Every spelling of the option, e.g. ["-d", "--directory"]; the first long one is its key.
    let names: [String]
    let takesValue: Bool
    let help: String

    var key: String { names.first { $0.hasPrefix("--") } ?? names[0] }
}

/// Options every command takes.
let globalOptions: [OptionSpec] = [
    OptionSpec(names: ["--config"], takesValue: true, help: "read settings from this file instead of the default"),
    OptionSpec(names: ["-o", "--option"], takesValue: true, help: "set one setting, key=value (repeatable; wins over the file)"),
    OptionSpec(names: ["-q", "--quiet"], takesValue: false, help: "no progress output"),
    OptionSpec(names: ["-h", "--help"], takesValue: false, help: "show this help"),
]

/// The result of parsing one command's arguments.
struct ParsedArguments {
    var positionals: [String] = []
    private var values: [String: [String]] = [:]

    func has(_ key: String) -> Bool { values[key] != nil }
    func value(_ key: String) -> String? { values[key]?.last }
    func all(_ key: String) -> [String] { values[key] ?? [] }

    /// Parses `arguments` against `options` (plus the global ones). `--` ends option parsing;
    /// `--name=value` and `--name value` both work.
    static func parse(_ arguments: [String], options: [OptionSpec]) throws -> ParsedArguments {
        let specs = options + globalOptions
        var result = ParsedArguments()
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            var name = argument
            var inlineValue: String? = nil
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let spec = specs.first(where: { $0.names.contains(name) }) else {
                throw UsageError("unknown option '\(name)'")
            }
            if spec.takesValue {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError("option '\(name)' needs a value") }
                    value = arguments[index]
                    index += 1
                }
                result.values[spec.key, default: []].append(value)
            } else {
                if inlineValue != nil { throw UsageError("option '\(name)' takes no value") }
                result.values[spec.key, default: []].append("")
            }
        }
        return result
    }
}

/// A mistake in how the command was called (exit code 2).
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import ASiC
import Foundation

/// `--json` of `sign`, `create`, `add`, `remove`, `extend` and `extract`: one object on
/// standard output, on success (`"ok": true` and what was done) and on failure (`"ok": false`,
/// the one-line `error`, the exit status as without --json). snake_case, with `format_version`.
enum CommandJSON {
    static let commands: Set<String> = ["sign", "create", "add", "remove", "extend", "extract"]

    /// A value of a result: text, a number, a flag, a list or an object of those.
    indirect enum Value: Encodable {
        case text(String), number(Int), flag(Bool), list([Value]), object([String: Value]), null

        func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .number(let number): try container.encode(number)
            case .flag(let flag): try container.encode(flag)
            case .list(let list): try container.encode(list)
            case .object(let object): try container.encode(object)
            case .null: try container.encodeNil()
            }
        }
    }

    static func success(_ command: String, container: String, _ fields: [String: Value]) {
        emit(["command": .text(command), "container": .text(container), "ok": .flag(true)].merging(fields) { first, _ in first })
    }

    static func failure(_ command: String, container: String?, error: String, status: Int32) {
        var fields: [String: Value] = ["command": .text(command), "ok": .flag(false), "error": .text(error), "exit_status": .number(Int(status))]
        if let container { fields["container"] = .text(container) }
        emit(fields)
    }

    /// Any of asicfs's JSON objects (also `verify --json`'s error object), with `format_version`.
    static func emit(_ fields: [String: Value]) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var all = fields
        all["format_version"] = .number(JSONFormat.version)
        guard let data = try? encoder.encode(all) else { return }
        FileHandle.standardOutput.write(Data((PrintableText.jsonSafe(String(decoding: data, as: UTF8.self)) + "\n").utf8))
    }

    static func names(_ names: [String]) -> Value { .list(names.map { .text($0) }) }
}

/// The `--json` option of those commands.
let jsonOption = OptionSpec(names: ["--json"], takesValue: false, help: "print the result as one JSON object (also on failure)")

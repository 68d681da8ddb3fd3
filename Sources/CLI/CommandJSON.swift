import ASiC
import Foundation

/// `--json` of every command that takes it: one envelope on success and on failure
/// (`format_version`, `command`, `ok`, `exit_status`, `error` as `{code, message}` or null,
/// `container` for the commands that take one) with the command's own fields beside it.
/// snake_case; docs/json-schema.json is the schema, asicfs(1) JSON OUTPUT the description.
enum CommandJSON {
    /// The commands whose first argument is the container (named `container` in the envelope).
    static let containerCommands: Set<String> = ["ls", "verify", "sign", "create", "add", "remove", "extend", "extract", "decrypt", "encrypt"]
    /// The commands that print JSON Lines (one compact object per event) instead of one object.
    static let lineCommands: Set<String> = ["sign"]
    /// The commands whose first argument is a subcommand (`card status`): named with it.
    static let subcommands: [String: Set<String>] = ["card": ["status", "certs", "pins"], "remote": ["credentials"]]

    /// `command` as the user typed it: `card status`, not just `card`.
    static func name(_ command: String, positionals: [String]) -> String {
        guard let first = positionals.first, subcommands[command]?.contains(first) == true else { return command }
        return "\(command) \(first)"
    }

    /// A value of a result: text, a number, a flag, a list or an object of those.
    indirect enum Value: Codable, Equatable {
        case text(String), number(Int), decimal(Double), flag(Bool), list([Value]), object([String: Value]), null

        func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .number(let number): try container.encode(number)
            case .decimal(let number): try container.encode(number)
            case .flag(let flag): try container.encode(flag)
            case .list(let list): try container.encode(list)
            case .object(let object): try container.encode(object)
            case .null: try container.encodeNil()
            }
        }

        /// Any JSON, so that a report made elsewhere (verify's, tokens') goes into the envelope as it is.
        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null }
            else if let flag = try? container.decode(Bool.self) { self = .flag(flag) }
            else if let number = try? container.decode(Int.self) { self = .number(number) }
            else if let number = try? container.decode(Double.self) { self = .decimal(number) }
            else if let text = try? container.decode(String.self) { self = .text(text) }
            else if let list = try? container.decode([Value].self) { self = .list(list) }
            else { self = .object(try container.decode([String: Value].self)) }
        }

        /// The JSON shape of an Encodable value, with snake_case keys.
        init(encoding value: some Encodable) throws {
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            self = try JSONDecoder().decode(Value.self, from: encoder.encode(value))
        }

        /// Parsed JSON text.
        init(json: String) throws {
            self = try JSONDecoder().decode(Value.self, from: Data(json.utf8))
        }

        /// The fields of an object (empty for anything else).
        var fields: [String: Value] {
            if case .object(let fields) = self { return fields }
            return [:]
        }
    }

    /// The envelope of a command that ran to its result; a status other than 0 (verify's
    /// INVALID) is `ok: false` with `error` saying why in `code` and `message`.
    static func result(_ command: String, container: String?, status: Int32 = 0, error: (ErrorCode, String)? = nil,
                       _ fields: [String: Value]) {
        var all = fields
        all["command"] = .text(command)
        all["ok"] = .flag(status == 0)
        all["exit_status"] = .number(Int(status))
        all["error"] = error.map { .object(["code": .text($0.0.rawValue), "message": .text($0.1)]) } ?? .null
        if let container { all["container"] = .text(container) }
        if lineCommands.contains(command) { all["event"] = .text("result") }
        emit(all, line: lineCommands.contains(command))
    }

    static func success(_ command: String, container: String?, _ fields: [String: Value]) {
        result(command, container: container, fields)
    }

    static func failure(_ command: String, container: String?, code: ErrorCode, error: String, status: Int32) {
        result(command, container: container, status: status, error: (code, error), [:])
    }

    /// One event of a command that prints JSON Lines (`sign`): `event` names it.
    static func event(_ command: String, _ event: String, _ fields: [String: Value]) {
        emit(fields.merging(["command": .text(command), "event": .text(event)]) { _, new in new }, line: true)
    }

    /// Any of asicfs's JSON objects, with `format_version`: pretty, or one line (JSON Lines).
    static func emit(_ fields: [String: Value], line: Bool = false) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = line ? [.sortedKeys, .withoutEscapingSlashes] : [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var all = fields
        all["format_version"] = .number(JSONFormat.version)
        guard let data = try? encoder.encode(all) else { return }
        FileHandle.standardOutput.write(Data((PrintableText.jsonSafe(String(decoding: data, as: UTF8.self)) + "\n").utf8))
    }

    static func names(_ names: [String]) -> Value { .list(names.map { .text($0) }) }

    /// `data_files` in every output: a list of objects, each with at least `name`.
    static func dataFiles(_ files: [DataFile]) -> Value {
        .list(files.map { file in
            .object(["name": .text(file.name), "size": .number(Int(file.size)), "compressed_size": .number(Int(file.compressedSize)),
                     "compression": .text(file.isCompressed ? "deflate" : "stored"), "media_type": .text(file.mediaType),
                     "modified": .text(Format.isoDate(file.modified))])
        })
    }
}

/// The `--json` option of those commands.
let jsonOption = OptionSpec(names: ["--json"], takesValue: false, help: "print the result as JSON, also on failure (see asicfs(1) JSON OUTPUT)")

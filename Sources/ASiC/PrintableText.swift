/// Text from a container (names, media types, signer names) shown to a person: on one line, and
/// with nothing a terminal would act on or a reader would be misled by. Every human message asicfs
/// prints goes through here; JSON output is escaped by JSON (and `jsonSafe`).
///
/// The convention (also in asicfs(1)):
///   - line feed, carriage return, tab: `\n`, `\r`, `\t`
///   - other C0 controls (ESC, BEL, ...) and DEL: `\x1b`, `\x07`, `\x7f` (two lowercase hex digits)
///   - C1 controls (U+0080–U+009F), bidirectional controls (U+061C, U+200E, U+200F,
///     U+202A–U+202E, U+2066–U+2069) and the line and paragraph separators (U+2028, U+2029):
///     `\u{0085}`, `\u{202E}` (four or more uppercase hex digits)
/// A backslash stays as it is: entry names cannot contain one (see `EntryName`), so a `\` in a
/// name shown by asicfs always starts one of these escapes. Everything else, including letters
/// such as õ, ä, ö, ü, is kept unchanged. (A ZIP name that is not UTF-8 is read as IBM 437, so
/// its bytes reach this as visible characters.)
public enum PrintableText {
    /// `text` on one line, with every control and bidirectional character made visible.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        for scalar in text.unicodeScalars { append(scalar, to: &out) }
        return out
    }

    /// Like `escaped(_:)`, but line feeds stay line feeds: for a report of several lines whose
    /// fields were escaped already (a last guard at the output).
    public static func escapedKeepingLines(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 != "\n" && needsEscape($0) }) else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { escaped(String($0)) }
            .joined(separator: "\n")
    }

    /// A JSON document with C1, bidirectional and line-separator characters written as `\uXXXX`:
    /// the same JSON value (those characters can only be inside strings), but safe on a terminal.
    public static func jsonSafe(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: isFormatOrC1) else { return json }
        var out = ""
        for scalar in json.unicodeScalars {
            if isFormatOrC1(scalar) { out += "\\u" + hex(scalar.value, digits: 4) } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }

    /// True for every character `escaped` rewrites.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F || isFormatOrC1(scalar)
    }

    /// C1 controls, bidirectional controls and the line and paragraph separators.
    static func isFormatOrC1(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// The bidirectional controls that reorder text (embeddings, overrides, isolates): the
    /// "Trojan Source" characters, which new names may not contain. (The marks U+200E, U+200F
    /// and U+061C only nudge neutral characters; they are shown escaped but allowed.)
    static func isBidiOverride(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// "U+001B", "U+202E": how a message names one character.
    public static func codePoint(_ scalar: Unicode.Scalar) -> String {
        "U+" + hex(scalar.value, digits: 4).uppercased()
    }

    private static func append(_ scalar: Unicode.Scalar, to out: inout String) {
        switch scalar {
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += "\\x" + hex(scalar.value, digits: 2)
        case _ where isFormatOrC1(scalar): out += "\\u{" + hex(scalar.value, digits: 4).uppercased() + "}"
        default: out.unicodeScalars.append(scalar)
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

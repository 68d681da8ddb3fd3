/// The names a CDOC2 payload may create (spec §2.7, the reference implementation's list): a
/// plain file name, never a path, nothing a file manager or another system would misread. The
/// cdoc1 branch has its own SafeFileName; the two are to be merged.
enum CDOC2FileName {
    static let maximumBytes = 1000
    private static let reservedStems: Set<String> = {
        var names: Set<String> = ["CON", "PRN", "AUX", "NUL"]
        for digit in 1 ... 9 { names.insert("COM\(digit)"); names.insert("LPT\(digit)") }
        return names
    }()
    private static let forbidden: Set<Unicode.Scalar> = ["<", ">", ":", "\"", "/", "\\", "|", "?", "*",
                                                         "\u{202E}", "\u{FFFE}", "\u{FFFF}"]

    /// The name as a String when it is safe, else `.unsafeName` naming it (escaped).
    static func checked(_ raw: [UInt8]) throws -> String {
        guard let name = String(validating: raw, as: UTF8.self) else {
            throw CDOCError(.unsafeName, "the container holds a file name that is not valid UTF-8: \(escaped(String(decoding: raw, as: UTF8.self)))")
        }
        guard isSafe(name) else { throw CDOCError(.unsafeName, "the container holds a file name asicfs will not create: \(escaped(name))") }
        return name
    }

    static func isSafe(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= maximumBytes, name != ".", name != ".." else { return false }
        guard let first = name.unicodeScalars.first, let last = name.unicodeScalars.last,
              first != " ", first != "-", last != " ", last != "." else { return false }
        for scalar in name.unicodeScalars {
            if scalar.value < 0x20 || (0x7F ... 0x9F).contains(scalar.value) || forbidden.contains(scalar) { return false }
        }
        let stem = name.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? name
        return !reservedStems.contains(stem.uppercased())
    }

    /// A name fit for a one-line message: control characters and the like as \u{…}, at most 200 characters.
    static func escaped(_ name: String) -> String {
        var out = "‘"
        for scalar in name.unicodeScalars.prefix(200) {
            if scalar.value < 0x20 || (0x7F ... 0x9F).contains(scalar.value) || [0x202E, 0xFFFE, 0xFFFF, 0x2028, 0x2029].contains(scalar.value) {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out + (name.unicodeScalars.count > 200 ? "…’" : "’")
    }
}

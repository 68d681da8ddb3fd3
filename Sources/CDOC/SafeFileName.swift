/// The one rule for names that come out of an encrypted container (CDOC 1.x `Filename` and DDOC
/// `DataFile@Filename`, CDOC2 tar entries): a name is one plain file name in the folder it is
/// unpacked into, or it is refused. Nothing is "repaired": a refused name fails the whole
/// container, so what is written is always what the sender named. The rules are the CDOC2
/// unpacking rules (spec ch03, cdoc2-java `FileNameValidator`) plus what Linux itself needs;
/// both formats, reading and writing, use this one rule.
public enum SafeFileName {
    /// Longest name in bytes: Linux's NAME_MAX (the CDOC2 spec allows more, which no file here can have).
    public static let maximumBytes = 255

    /// Names Windows reserves; refused so that a container unpacked here unpacks anywhere.
    static let reserved = Set(["CON", "PRN", "AUX", "NUL"] + (1...9).map { "COM\($0)" } + (1...9).map { "LPT\($0)" })

    /// `name` when it is safe, else `CDOCError(.unsafeName)` saying why (the name escaped).
    @discardableResult
    public static func check(_ name: String) throws -> String {
        func refuse(_ why: String) -> CDOCError {
            CDOCError(.unsafeName, "the file name '\(escaped(name))' is refused: \(why)")
        }
        if name.isEmpty { throw CDOCError(.unsafeName, "a file has an empty name") }
        if name == "." || name == ".." { throw refuse("it names a folder") }
        if name.utf8.count > maximumBytes { throw refuse("longer than \(maximumBytes) bytes") }
        if let bad = name.unicodeScalars.first(where: { "<>:\"/\\|?*".unicodeScalars.contains($0) }) {
            throw refuse("it contains '\(bad)'")
        }
        if name.unicodeScalars.contains(where: isControlOrDirectional) {
            throw refuse("it contains a control or text-direction character")
        }
        if name.hasPrefix(" ") || name.hasPrefix("-") { throw refuse("it starts with a space or '-'") }
        if name.hasSuffix(" ") || name.hasSuffix(".") { throw refuse("it ends with a space or '.'") }
        let stem = name.split(separator: ".", maxSplits: 1).first.map(String.init) ?? name
        if reserved.contains(stem.uppercased()) { throw refuse("a reserved device name") }
        return name
    }

    /// The name of raw bytes (a tar header's) when they are UTF-8 and a safe name.
    public static func checked(_ raw: [UInt8]) throws -> String {
        guard let name = String(validating: raw, as: UTF8.self) else {
            throw CDOCError(.unsafeName, "the file name '\(escaped(String(decoding: raw, as: UTF8.self)))' is refused: it is not valid UTF-8")
        }
        return try check(name)
    }

    /// Whether `check` would accept `name`.
    public static func isSafe(_ name: String) -> Bool { (try? check(name)) != nil }

    /// Checks every name and that no two are the same (a second file must not replace the first).
    public static func checkAll(_ names: [String]) throws {
        var seen = Set<String>()
        for name in names {
            try check(name)
            guard seen.insert(name).inserted else {
                throw CDOCError(.unsafeName, "the file name '\(escaped(name))' appears twice")
            }
        }
    }

    /// C0/C1 controls, DEL, the line and paragraph separators (U+2028/U+2029: a line break to
    /// a terminal), bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069), and the
    /// non-characters U+FFFE/U+FFFF.
    static func isControlOrDirectional(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028...0x202E, 0x2066...0x2069, 0xFFFE, 0xFFFF: true
        default: false
        }
    }

    /// A name (or a label, a server name) as it may appear in a one-line message: controls and
    /// the characters above as \u{…}, at most 300 characters.
    public static func escaped(_ name: String) -> String {
        var text = ""
        for scalar in name.unicodeScalars.prefix(300) {
            if isControlOrDirectional(scalar) {
                text += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return name.unicodeScalars.count > 300 ? text + "…" : text
    }
}

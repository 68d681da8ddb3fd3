/// The rules for names inside a container (libdigidocpp's `validateDataFilePath`, plus the
/// ZIP safety checks): relative, `/`-separated, no empty, `.` or `..` segment, no `\`, no NUL.
public enum EntryName {
    public static let mimetype = "mimetype"
    public static let metaInfPrefix = "META-INF/"

    /// Throws unless `name` is a safe entry path. A trailing `/` is allowed only for directory entries.
    public static func validate(_ name: String, isDirectory: Bool = false) throws {
        var path = name
        if isDirectory, path.hasSuffix("/") { path.removeLast() }
        if path.isEmpty { throw ContainerError.invalidName(name, reason: "it is empty") }
        if path.hasPrefix("/") { throw ContainerError.invalidName(name, reason: "it is an absolute path") }
        if path.hasSuffix("/") { throw ContainerError.invalidName(name, reason: "it ends with '/'") }
        // Byte searches: this runs for every entry of every container opened.
        if path.utf8.contains(UInt8(ascii: "\\")) { throw ContainerError.invalidName(name, reason: "it contains '\\'") }
        if path.utf8.contains(0) {
            throw ContainerError.invalidName(name, reason: "it contains a NUL character")
        }
        // Segments by bytes ('/' and '.' are ASCII, so UTF-8 cannot hide them): no grapheme
        // breaking for the thousands of names a container may hold.
        var segmentLength = 0, dots = 0
        for byte in path.utf8 + [UInt8(ascii: "/")] {
            guard byte == UInt8(ascii: "/") else {
                segmentLength += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
                continue
            }
            if segmentLength == 0 { throw ContainerError.invalidName(name, reason: "it has an empty path segment") }
            if segmentLength == 1 && dots == 1 { throw ContainerError.invalidName(name, reason: "it has a '.' path segment") }
            if segmentLength == 2 && dots == 2 {
                throw ContainerError.invalidName(name, reason: "it has a '..' path segment (path traversal)")
            }
            segmentLength = 0
            dots = 0
        }
        if path.utf8.count > 65_535 { throw ContainerError.invalidName(String(name.prefix(40)) + "…", reason: "it is too long") }
    }

    /// Throws unless `name` may be given to a new data file (also not reserved for the container itself).
    public static func validateDataFileName(_ name: String) throws {
        try validate(name)
        if name == mimetype { throw ContainerError.invalidName(name, reason: "'mimetype' is reserved") }
        if name.hasPrefix(metaInfPrefix) || name == "META-INF" {
            throw ContainerError.invalidName(name, reason: "META-INF is reserved for the container's own files")
        }
        // Containers from elsewhere may hold such names (they open, and show escaped), but new
        // ones may not: XML 1.0 cannot even write most C0 controls into the manifest, and the
        // rest make a name print as something else (a fake line, terminal commands, reordered text).
        if let scalar = name.unicodeScalars.first(where: isRefused) {
            let code = PrintableText.codePoint(scalar)
            throw ContainerError.invalidName(name, reason: PrintableText.isBidiOverride(scalar)
                ? "it contains the bidirectional control \(code), which can make a name look like another"
                : "it contains the control character \(code)")
        }
    }

    /// Control characters (C0, DEL, C1), bidirectional embeddings, overrides and isolates, and the
    /// line and paragraph separators.
    static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        PrintableText.needsEscape(scalar) && !["\u{200E}", "\u{200F}", "\u{061C}"].contains(scalar)
    }
}

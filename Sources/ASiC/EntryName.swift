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
        if path.contains("\\") { throw ContainerError.invalidName(name, reason: "it contains '\\'") }
        if path.unicodeScalars.contains(where: { $0.value == 0 }) {
            throw ContainerError.invalidName(name, reason: "it contains a NUL character")
        }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) {
            switch segment {
            case "": throw ContainerError.invalidName(name, reason: "it has an empty path segment")
            case ".": throw ContainerError.invalidName(name, reason: "it has a '.' path segment")
            case "..": throw ContainerError.invalidName(name, reason: "it has a '..' path segment (path traversal)")
            default: continue
            }
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
    }
}

/// Splitting '/'-separated paths as plain text. (Foundation's NSString path methods trap on
/// one-character strings in this toolchain, and they also "standardize" paths we must keep as is.)
public enum PathText {
    /// Everything before the last '/', "" when there is none ("a/b/c" -> "a/b", "c" -> "").
    /// For file-system paths use `folder(of:)`, which gives "." instead of "".
    public static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        if slash == trimmed.startIndex { return "/" }
        return String(trimmed[..<slash])
    }

    /// The folder a file-system path is in ("x.asice" -> ".", "/a/x" -> "/a", "/x" -> "/").
    public static func folder(of path: String) -> String {
        let parent = parent(of: path)
        return parent.isEmpty ? "." : parent
    }

    /// Adds every folder `name` is inside to `folders` ("a/b/c" adds "a/b" and "a"); stops at
    /// the first one already there, whose own parents are then there too. Linear in the name.
    public static func insertFolders(of name: String, into folders: inout Set<String>) {
        var parent = parent(of: name)
        while !parent.isEmpty, parent != "/", folders.insert(parent).inserted { parent = Self.parent(of: parent) }
    }

    /// The part after the last '/' ("a/b.txt" -> "b.txt", "b" -> "b").
    public static func lastComponent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// The longest a name in a folder may be, in bytes (NAME_MAX on Linux).
    public static let nameMax = 255

    /// `name`, cut at a character boundary so that `extra` more bytes still fit in a name: temporary
    /// and spool names put a container's name before their own suffix, and a container name near
    /// NAME_MAX must not push them past it.
    public static func shortened(_ name: String, leavingRoomFor extra: Int) -> String {
        let room = max(0, nameMax - extra)
        guard name.utf8.count > room else { return name }
        var kept = Substring(name)
        while kept.utf8.count > room { kept.removeLast() }
        return String(kept)
    }
}

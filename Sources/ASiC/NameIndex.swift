/// The data-file names of an edit and the folders they imply, for the checks every new name
/// needs (taken? a folder? inside a file?) in constant time: a container may hold a million names,
/// and searching the list for each would make adding them quadratic.
struct NameIndex {
    private(set) var names: Set<String> = []
    /// Each folder implied by a name ("a/b/c" implies "a/b" and "a"), with how many names are inside it.
    private var folders: [String: Int] = [:]

    init(_ names: some Sequence<String>) {
        for name in names { insert(name) }
    }

    mutating func insert(_ name: String) {
        guard names.insert(name).inserted else { return }
        Self.forEachFolder(of: name) { folders[$0, default: 0] += 1 }
    }

    mutating func remove(_ name: String) {
        guard names.remove(name) != nil else { return }
        Self.forEachFolder(of: name) { folder in
            let left = folders[folder, default: 1] - 1
            folders[folder] = left > 0 ? left : nil
        }
    }

    func contains(_ name: String) -> Bool { names.contains(name) }

    /// True when some name is inside `name` ("a" for "a/b").
    func isFolder(_ name: String) -> Bool { folders[name] != nil }

    /// The name of a file that `name` would be inside ("a" for "a/b/c" when "a" is a file).
    func fileAbove(_ name: String) -> String? {
        var parent = PathText.parent(of: name)
        while !parent.isEmpty {
            if names.contains(parent) { return parent }
            parent = PathText.parent(of: parent)
        }
        return nil
    }

    private static func forEachFolder(of name: String, _ body: (String) -> Void) {
        var parent = PathText.parent(of: name)
        while !parent.isEmpty {
            body(parent)
            parent = PathText.parent(of: parent)
        }
    }
}

/// The data-file names of a mount's view, in container order, with constant-time append,
/// removal and rename of one name, and the number of files below each folder, so that "is this
/// a folder" and "is this folder empty" need no scan of every name (`rm -rf` of 10,000 files
/// took minutes when each removal rescanned them all). A removal leaves a hole in the order;
/// holes are squeezed out once they are as many as the names.
struct OrderedNames: Sequence {
    private var slots: [String?] = []
    private var position: [String: Int] = [:]
    private var holes = 0
    /// Folder -> number of files anywhere below it ("a/b/c" counts for "a" and "a/b").
    private var filesBelow: [String: Int] = [:]

    init(_ names: [String] = []) {
        for name in names { append(name) }
    }

    var count: Int { position.count }

    func contains(_ name: String) -> Bool { position[name] != nil }

    /// Whether some file lies below `folder`.
    func hasFiles(below folder: String) -> Bool { filesBelow[folder, default: 0] > 0 }

    mutating func append(_ name: String) {
        guard position[name] == nil else { return }
        position[name] = slots.count
        slots.append(name)
        countParents(of: name, by: 1)
    }

    mutating func remove(_ name: String) {
        guard let index = position.removeValue(forKey: name) else { return }
        slots[index] = nil
        holes += 1
        countParents(of: name, by: -1)
        if holes > 64 && holes >= position.count { squeeze() }
    }

    /// Gives the name at `from`'s place the name `to` (which must not be present).
    mutating func rename(_ from: String, to: String) {
        guard let index = position.removeValue(forKey: from), position[to] == nil else { return }
        slots[index] = to
        position[to] = index
        countParents(of: from, by: -1)
        countParents(of: to, by: 1)
    }

    private mutating func countParents(of name: String, by delta: Int) {
        // By bytes: '/' is ASCII, and most names have none (no Character search over them).
        var end = name.utf8.endIndex
        while let slash = name.utf8[..<end].lastIndex(of: UInt8(ascii: "/")) {
            let folder = String(name[..<slash])
            let updated = filesBelow[folder, default: 0] + delta
            filesBelow[folder] = updated > 0 ? updated : nil
            end = slash
        }
    }

    private mutating func squeeze() {
        let names: [String] = slots.compactMap { $0 }
        slots = names
        position = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($0.element, $0.offset) })
        holes = 0
    }

    struct Iterator: IteratorProtocol {
        fileprivate var base: IndexingIterator<[String?]>
        mutating func next() -> String? {
            while let slot = base.next() {
                if let name = slot { return name }
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(base: slots.makeIterator()) }
}

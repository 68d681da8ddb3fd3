import Foundation

/// What `getattr` reports for one path.
public struct NodeAttributes: Sendable, Equatable {
    public enum Kind: Sendable { case file, directory, symlink }
    public var kind: Kind
    public var size: Int64
    public var permissions: UInt16
    public var modified: Date
    /// Content generated on every read (control files): the kernel must not cache it.
    public var isDynamic = false
    /// A real file's status, reported as it is (browse mode's pass-through files, and a
    /// container folder made from its file's status): owner, times, links, mode.
    var native: stat?
    /// Whom a node that is not a real file belongs to; nil: the daemon's user. A container's
    /// data files in browse mode carry its file's owner (`BrowseChild.owner`).
    var owner: (user: uid_t, group: gid_t)?

    public init(kind: Kind, size: Int64, permissions: UInt16, modified: Date, isDynamic: Bool = false) {
        self.kind = kind
        self.size = size
        self.permissions = permissions
        self.modified = modified
        self.isDynamic = isDynamic
    }

    /// The attributes of a real file, from its status.
    init(native status: stat) {
        let type = status.st_mode & S_IFMT
        kind = type == S_IFDIR ? .directory : type == S_IFLNK ? .symlink : .file
        size = Int64(status.st_size)
        permissions = UInt16(status.st_mode & 0o7777)
        modified = Date(timeIntervalSince1970: TimeInterval(status.st_mtim.tv_sec) + TimeInterval(status.st_mtim.tv_nsec) / 1e9)
        native = status
    }

    /// The same, belonging to `owner`.
    func owned(by owner: (user: uid_t, group: gid_t)) -> NodeAttributes {
        var copy = self
        copy.owner = owner
        return copy
    }

    static func directory(_ permissions: UInt16, _ modified: Date) -> NodeAttributes {
        NodeAttributes(kind: .directory, size: 0, permissions: permissions, modified: modified)
    }

    public static func == (a: NodeAttributes, b: NodeAttributes) -> Bool {
        a.kind == b.kind && a.size == b.size && a.permissions == b.permissions && a.modified == b.modified
            && a.isDynamic == b.isDynamic && (a.native == nil) == (b.native == nil)
            && a.owner?.user == b.owner?.user && a.owner?.group == b.owner?.group
    }
}

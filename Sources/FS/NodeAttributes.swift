import Foundation

/// What `getattr` reports for one path.
public struct NodeAttributes: Sendable, Equatable {
    public enum Kind: Sendable { case file, directory }
    public var kind: Kind
    public var size: Int64
    public var permissions: UInt16
    public var modified: Date
    /// Content generated on every read (control files): the kernel must not cache it.
    public var isDynamic = false

    static func directory(_ permissions: UInt16, _ modified: Date) -> NodeAttributes {
        NodeAttributes(kind: .directory, size: 0, permissions: permissions, modified: modified)
    }
}

import Foundation

/// The narrow interface the FUSE adaptor talks to: one mounted tree, by path, in Swift terms,
/// with errors as `FileSystemError` (mapped to an errno in one place). `ContainerFileSystem`
/// (one container) and `BrowseFileSystem` (a folder tree whose containers are folders, a layer
/// that delegates each container to a `ContainerFileSystem`) implement it. Safe to call from
/// many threads at once. Handles are the source's own numbers, kept by the kernel in `fh`.
protocol MountSource: AnyObject, Sendable {
    func attributes(_ path: String) throws -> NodeAttributes
    /// fstat of an open file that may have no name any more.
    func attributes(handle: UInt64) throws -> NodeAttributes
    func list(_ path: String) throws -> [String]
    /// The names directly inside a folder with their attributes (READDIRPLUS).
    func listWithAttributes(_ path: String) throws -> [(String, NodeAttributes)]

    func open(_ path: String, flags: Int32) throws -> ContainerFileSystem.OpenResult
    func create(_ path: String, flags: Int32, mode: mode_t) throws -> ContainerFileSystem.OpenResult
    func read(_ handle: UInt64, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64,
              stop: () -> Int32?) throws -> Int
    func write(_ handle: UInt64, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> Int
    /// By path, or through an open handle (`path` nil: a file removed while open).
    func truncate(_ path: String?, to length: Int64, handle: UInt64?) throws
    func release(_ handle: UInt64)
    /// fsync: through a handle when the kernel gives one.
    func sync(_ path: String?, handle: UInt64?) throws

    func unlink(_ path: String) throws
    func makeFolder(_ path: String, mode: mode_t) throws
    func removeFolder(_ path: String) throws
    /// `flags`: `ContainerFileSystem.renameNoReplace`, `.renameExchange` (renameat2's values).
    func rename(_ from: String, to: String, flags: UInt32) throws
    /// utimensat's two times; a `tv_nsec` of `FileTimes.now` or `FileTimes.omit` means what it does there.
    func setTimes(_ path: String, accessed: timespec, modified: timespec) throws
    func setMode(_ path: String, _ mode: mode_t) throws
    func setOwner(_ path: String, user: uid_t, group: gid_t) throws
    func makeSymlink(_ path: String, target: String) throws
    func readSymlink(_ path: String) throws -> String
    func fileSystemStatistics(_ path: String) throws -> statvfs
    /// A hard link: `newPath` becomes a second name of `path`'s file.
    func link(_ path: String, to newPath: String) throws
    /// Extended attributes (listxattr, getxattr: ENODATA when absent; setxattr with its
    /// XATTR_CREATE/XATTR_REPLACE flags, removexattr).
    func extendedAttributeNames(_ path: String) throws -> [String]
    func extendedAttribute(_ path: String, name: String) throws -> [UInt8]
    func setExtendedAttribute(_ path: String, name: String, value: [UInt8], flags: Int32) throws
    func removeExtendedAttribute(_ path: String, name: String) throws

    /// The loop is about to run: `invalidate` drops the kernel's cache of a path (data,
    /// attributes, entry); changes are saved on their own schedule from now on.
    func start(invalidate: @escaping @Sendable (String) -> Void)
    /// The loop has ended: no more invalidations.
    func stop()
    /// Saves everything pending (unmount); nil, or why something could not be saved and where
    /// the unsaved files went. `everyFileClosed`: the kernel unmounted (see
    /// `ContainerFileSystem.close`).
    func close(everyFileClosed: Bool) -> String?
}

/// utimensat's special `tv_nsec` values (the Linux ABI: UTIME_NOW, UTIME_OMIT).
enum FileTimes {
    static let now = (1 << 30) - 1
    static let omit = (1 << 30) - 2
}

/// Keeps the source alive for libfuse, which gets an untyped pointer (`private_data`), behind
/// the gate that holds requests while a container is checked (see `MountGate`), and
/// the listings of open folders: a listing is made once per opendir (and rewind) and handed
/// out in pieces by offset, so that READDIRPLUS carries the attributes (libfuse passes them
/// to the kernel only for entries filled with offsets; a listing filled all at once makes the
/// kernel send one LOOKUP per name after it).
final class MountSourceBox: @unchecked Sendable {
    let gate: MountGate
    /// The root folder's attributes while the check runs: a folder, writable unless the mount
    /// is read-only, with the container file's time. The check's own (a signed container's
    /// root is not writable, and shows its newest file's time) replace them when it ends: the
    /// kernel is then told to drop what it cached.
    let provisionalRoot: NodeAttributes
    private let lock = NSLock()
    private var listings: [UInt64: Listing] = [:]
    private var nextListing: UInt64 = 1

    struct Listing {
        var entries: [(name: String, attributes: NodeAttributes?)]
        var withAttributes: Bool
    }

    init(gate: MountGate, provisionalRoot: NodeAttributes) {
        self.gate = gate
        self.provisionalRoot = provisionalRoot
    }

    /// The checked source (waits for the check; EIO when it failed).
    var source: any MountSource { get throws { try gate.source() } }

    func openListing() -> UInt64 {
        lock.withLock {
            defer { nextListing += 1 }
            listings[nextListing] = Listing(entries: [], withAttributes: false)
            return nextListing
        }
    }

    func closeListing(_ id: UInt64) { lock.withLock { listings[id] = nil } }

    /// The entries of an open folder ("." and ".." first); made again at offset 0 (rewinddir).
    func listing(_ id: UInt64, path: String, offset: Int, withAttributes: Bool) throws -> [(name: String, attributes: NodeAttributes?)] {
        if offset > 0, let listing = lock.withLock({ listings[id] }), listing.withAttributes || !withAttributes,
           !listing.entries.isEmpty {
            return listing.entries
        }
        let entries: [(name: String, attributes: NodeAttributes?)] = withAttributes
            ? try source.listWithAttributes(path).map { ($0.0, $0.1) }
            : try source.list(path).map { ($0, nil) }
        let all = [(".", nil), ("..", nil)] + entries
        lock.withLock { if listings[id] != nil { listings[id] = Listing(entries: all, withAttributes: withAttributes) } }
        return all
    }
}

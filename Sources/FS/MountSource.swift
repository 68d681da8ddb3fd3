import Foundation

/// The narrow interface the FUSE adaptor talks to: one mounted tree, by path, in Swift terms,
/// with errors as `FileSystemError` (mapped to an errno in one place). `MountRouter` (one
/// container: its data files and its control folder) and `BrowseFileSystem` (a folder tree
/// whose containers are folders, a layer that hands each container to that container's
/// `MountRouter`) implement it. Safe to call from many threads at once. Handles are the
/// source's own numbers, kept by the kernel in `fh`. What a source does not support has a
/// default answer below (EPERM for changes, ENODATA and ENOTSUP for extended attributes).
protocol MountSource: AnyObject, Sendable {
    func attributes(_ path: String) throws -> NodeAttributes
    /// fstat of an open file that may have no name any more.
    func attributes(handle: UInt64) throws -> NodeAttributes
    func list(_ path: String) throws -> [String]
    /// The names directly inside a folder with their attributes (READDIRPLUS).
    func listWithAttributes(_ path: String) throws -> [(String, NodeAttributes)]

    func open(_ path: String, flags: Int32) throws -> MountOpenResult
    func create(_ path: String, flags: Int32, mode: mode_t) throws -> MountOpenResult
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
    func rename(_ from: String, to: String, flags: RenameFlags) throws
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
    /// `DataFiles.close`).
    func close(everyFileClosed: Bool) -> String?
}

/// utimensat's special `tv_nsec` values (the Linux ABI: UTIME_NOW, UTIME_OMIT).
enum FileTimes {
    static let now = (1 << 30) - 1
    static let omit = (1 << 30) - 2
}


/// An open file's number for the kernel (`fh`), and how the kernel is to cache its bytes.
struct MountOpenResult: Sendable {
    let handle: UInt64
    /// The content cannot change behind the kernel's back: it may keep its page cache.
    let keepCache: Bool
    /// Generated content, or bytes that only one writer sees: bypass the page cache entirely.
    let directIO: Bool
}

/// renameat2's flags (the Linux ABI values: RENAME_NOREPLACE, RENAME_EXCHANGE).
struct RenameFlags: OptionSet, Sendable {
    let rawValue: UInt32
    static let noReplace = RenameFlags(rawValue: 1)
    static let exchange = RenameFlags(rawValue: 2)
}

/// What a source answers for what it does not support.
extension MountSource {
    func makeSymlink(_ path: String, target: String) throws { throw FileSystemError(EPERM) }
    func readSymlink(_ path: String) throws -> String { throw FileSystemError(EINVAL) }
    func link(_ path: String, to newPath: String) throws { throw FileSystemError(EPERM) }
    func setMode(_ path: String, _ mode: mode_t) throws { throw FileSystemError(EPERM) }
    func setOwner(_ path: String, user: uid_t, group: gid_t) throws { throw FileSystemError(EPERM) }
    func extendedAttributeNames(_ path: String) throws -> [String] {
        _ = try attributes(path)
        return []
    }
    func extendedAttribute(_ path: String, name: String) throws -> [UInt8] {
        _ = try attributes(path)
        throw FileSystemError(ENODATA)
    }
    func setExtendedAttribute(_ path: String, name: String, value: [UInt8], flags: Int32) throws {
        throw FileSystemError(ENOTSUP)
    }
    func removeExtendedAttribute(_ path: String, name: String) throws { throw FileSystemError(ENOTSUP) }
}

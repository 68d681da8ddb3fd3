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
    /// A close() of a descriptor (synchronous, unlike release).
    func flush(_ handle: UInt64)
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

    /// The loop is about to run: `invalidate` drops the kernel's cache of a path (data,
    /// attributes, entry); changes are saved on their own schedule from now on.
    func start(invalidate: @escaping @Sendable (String) -> Void)
    /// The loop has ended: no more invalidations.
    func stop()
    /// Saves everything pending (unmount); nil, or why something could not be saved and where
    /// the unsaved files went.
    func close() -> String?
}

/// utimensat's special `tv_nsec` values (the Linux ABI: UTIME_NOW, UTIME_OMIT).
enum FileTimes {
    static let now = (1 << 30) - 1
    static let omit = (1 << 30) - 2
}

/// Keeps the source alive for libfuse, which gets an untyped pointer (`private_data`).
final class MountSourceBox {
    let source: any MountSource
    init(_ source: any MountSource) { self.source = source }
}

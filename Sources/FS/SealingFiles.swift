import Foundation

/// The files of a folder being sealed into an encrypted container (`SealingMount`): one flat
/// folder, writable (0644, the mounter's) until sealed, read-only (0444) afterwards. The bytes
/// live in the `SealSpool`, never in the clear on disk.
final class SealingFiles: MountPart, @unchecked Sendable {
    let spool: SealSpool
    let mountedAt: Date
    /// Once sealed, every change is refused with EROFS.
    private let isSealed: () -> Bool

    init(spool: SealSpool, mountedAt: Date, isSealed: @escaping () -> Bool) {
        self.spool = spool
        self.mountedAt = mountedAt
        self.isSealed = isSealed
    }

    private final class OpenFile {
        let file: SealSpool.File
        let writable: Bool
        init(_ file: SealSpool.File, writable: Bool) {
            self.file = file
            self.writable = writable
        }
    }

    private func file(_ name: String) throws -> SealSpool.File {
        guard let file = spool.file(named: name) else { throw FileSystemError(ENOENT) }
        return file
    }

    private func checkWritable() throws { if isSealed() { throw FileSystemError(EROFS) } }

    private func attributes(of file: SealSpool.File) -> NodeAttributes {
        NodeAttributes(kind: .file, size: file.size, permissions: isSealed() ? 0o444 : 0o644, modified: mountedAt, isDynamic: true)
    }

    func attributes(_ name: String) throws -> NodeAttributes {
        if name.isEmpty { return .directory(isSealed() ? 0o555 : 0o755, mountedAt) }
        return attributes(of: try file(name))
    }

    func attributes(of file: AnyObject) throws -> NodeAttributes {
        guard let open = file as? OpenFile else { throw FileSystemError(EBADF) }
        return attributes(of: open.file)
    }

    func list(_ name: String) throws -> [String] {
        guard name.isEmpty else {
            _ = try file(name)
            throw FileSystemError(ENOTDIR)
        }
        return spool.names
    }

    func open(_ name: String, flags: Int32) throws -> PartOpened {
        var file = try file(name)
        let writes = flags & O_ACCMODE != O_RDONLY || flags & O_TRUNC != 0
        if writes { try checkWritable() }
        if flags & O_TRUNC != 0 { try spool.truncate(file, to: 0) }
        file = try self.file(name)
        return PartOpened(file: OpenFile(file, writable: writes), keepCache: false, directIO: false)
    }

    /// Only a flat folder: an encrypted container holds files, not folders.
    func create(_ name: String, writeOnly: Bool) throws -> PartOpened {
        try checkWritable()
        guard !name.contains("/") else { throw FileSystemError(ENOENT) }
        guard name != ControlFolder.name else { throw FileSystemError(EPERM) }
        return PartOpened(file: OpenFile(try spool.create(name), writable: true), keepCache: false, directIO: false)
    }

    func read(_ file: AnyObject, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64,
              stop: () -> Int32?) throws -> Int {
        guard let open = file as? OpenFile else { throw FileSystemError(EBADF) }
        return try spool.read(open.file, into: buffer, at: offset)
    }

    func write(_ file: AnyObject, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        guard let open = file as? OpenFile, open.writable else { throw FileSystemError(EBADF) }
        try checkWritable()
        try spool.write(open.file, buffer, at: offset)
        return buffer.count
    }

    func truncate(_ name: String?, to length: Int64, file: AnyObject?) throws {
        try checkWritable()
        if let open = file as? OpenFile { return try spool.truncate(open.file, to: length) }
        guard let name else { throw FileSystemError(EBADF) }
        try spool.truncate(try self.file(name), to: length)
    }

    func release(_ file: AnyObject) {}

    func unlink(_ name: String) throws {
        try checkWritable()
        try spool.remove(name)
    }

    func makeFolder(_ name: String) throws {
        try checkWritable()
        throw FileSystemError(EPERM)
    }

    func removeFolder(_ name: String) throws { throw FileSystemError(isSealed() ? EROFS : ENOTDIR) }

    func rename(_ from: String, to: String, flags: RenameFlags) throws {
        try checkWritable()
        guard !to.contains("/"), to != ControlFolder.name else { throw FileSystemError(EPERM) }
        if flags.contains(.exchange) { throw FileSystemError(EINVAL) }
        if flags.contains(.noReplace), spool.file(named: to) != nil { throw FileSystemError(EEXIST) }
        try spool.rename(from, to: to)
    }

    func setModified(_ name: String, to date: Date?) throws {
        try checkWritable()
        _ = try file(name)
    }
}

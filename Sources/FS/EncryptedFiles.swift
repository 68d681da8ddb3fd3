import Foundation

/// The files of a mounted encrypted container (.cdoc, .cdoc2): nothing until it is decrypted
/// through `.asicfs/decrypt/<method>`, then its files, read-only (0444, the mounter's), their
/// bytes read from the `EncryptedSpool`. Every change is refused with EROFS: an encrypted
/// container is opened, not edited.
final class EncryptedFiles: MountPart, @unchecked Sendable {
    let spool: EncryptedSpool
    let mountedAt: Date

    init(spool: EncryptedSpool, mountedAt: Date) {
        self.spool = spool
        self.mountedAt = mountedAt
    }

    private final class OpenFile {
        let file: EncryptedSpool.File
        init(_ file: EncryptedSpool.File) { self.file = file }
    }

    private func file(_ name: String) throws -> EncryptedSpool.File {
        guard let file = spool.file(named: name) else { throw FileSystemError(name.contains("/") ? ENOTDIR : ENOENT) }
        return file
    }

    private func attributes(of file: EncryptedSpool.File) -> NodeAttributes {
        NodeAttributes(kind: .file, size: file.size, permissions: 0o444, modified: mountedAt)
    }

    func attributes(_ name: String) throws -> NodeAttributes {
        if name.isEmpty { return .directory(0o555, mountedAt) }
        return attributes(of: try file(name))
    }

    func attributes(of file: AnyObject) throws -> NodeAttributes {
        guard let open = file as? OpenFile else { throw FileSystemError(EBADF) }
        return attributes(of: open.file)
    }

    /// The control folder's name is the mount's: a file of that name in the container is not shown.
    func list(_ name: String) throws -> [String] {
        guard name.isEmpty else {
            _ = try file(name)
            throw FileSystemError(ENOTDIR)
        }
        return spool.files.map(\.name).filter { $0 != ControlFolder.name }
    }

    func open(_ name: String, flags: Int32) throws -> PartOpened {
        let file = try file(name)
        if flags & O_ACCMODE != O_RDONLY || flags & O_TRUNC != 0 { throw FileSystemError(EROFS) }
        // The bytes never change while mounted: the kernel may keep its cache.
        return PartOpened(file: OpenFile(file), keepCache: true, directIO: false)
    }

    func create(_ name: String, writeOnly: Bool) throws -> PartOpened { throw FileSystemError(EROFS) }

    func read(_ file: AnyObject, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64,
              stop: () -> Int32?) throws -> Int {
        guard let open = file as? OpenFile else { throw FileSystemError(EBADF) }
        return try spool.read(open.file, into: buffer, at: offset)
    }

    func write(_ file: AnyObject, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        throw FileSystemError(EROFS)
    }

    func truncate(_ name: String?, to length: Int64, file: AnyObject?) throws { throw FileSystemError(EROFS) }
    func release(_ file: AnyObject) {}
    func unlink(_ name: String) throws { throw FileSystemError(EROFS) }
    func makeFolder(_ name: String) throws { throw FileSystemError(EROFS) }
    func removeFolder(_ name: String) throws { throw FileSystemError(EROFS) }
    func rename(_ from: String, to: String, flags: RenameFlags) throws { throw FileSystemError(EROFS) }
    func setModified(_ name: String, to date: Date?) throws { throw FileSystemError(EROFS) }
}

import ASiC
import CDOC
import Configuration
import Foundation

/// A new encrypted container being filled (`asicfs mount -o create new.cdoc2 MNT`, or `mkdir
/// new.cdoc2` in a browse mount): `.asicfs/…` goes to the `SealingControlFolder` (recipients,
/// seal), every other path to the `SealingFiles` (a flat writable folder whose bytes stay in the
/// `SealSpool`). The container file appears only when sealed (`Sealer`); unmounting seals when
/// there are recipients and files.
final class SealingMount: MountSource, @unchecked Sendable {
    let files: SealingFiles
    let control: SealingControlFolder
    let sealer: Sealer
    private let spool: SealSpool
    private let handleLock = NSLock()
    private var handles: [UInt64: (part: any MountPart, file: AnyObject)] = [:]
    private var nextHandle: UInt64 = 1

    /// `containerPath`: where the container is to be written (nothing there yet, or 0 bytes).
    init(containerPath: String, format: EncryptedFormat, configuration: Configuration) throws {
        let errors = LastError()
        let mountedAt = Date()
        spool = try SealSpool(containerPath: containerPath)
        let sealer = Sealer(containerPath: containerPath, format: format, spool: spool, configuration: configuration, errors: errors)
        self.sealer = sealer
        files = SealingFiles(spool: spool, mountedAt: mountedAt, isSealed: { sealer.isSealed })
        control = SealingControlFolder(sealer: sealer, errors: errors, mountedAt: mountedAt)
    }

    // MARK: - Routing

    private func route(_ path: String) -> (part: any MountPart, name: String) {
        let name = DataFiles.name(of: path)
        if let inner = ControlFolder.inner(name) { return (control, inner) }
        return (files, name)
    }

    private func register(_ opened: PartOpened, _ part: any MountPart) -> MountOpenResult {
        let id = handleLock.withLock { () -> UInt64 in
            defer { nextHandle += 1 }
            handles[nextHandle] = (part, opened.file)
            return nextHandle
        }
        return MountOpenResult(handle: id, keepCache: opened.keepCache, directIO: opened.directIO)
    }

    private func opened(_ handle: UInt64) throws -> (part: any MountPart, file: AnyObject) {
        guard let found = handleLock.withLock({ handles[handle] }) else { throw FileSystemError(EBADF) }
        return found
    }

    // MARK: - MountSource

    func attributes(_ path: String) throws -> NodeAttributes {
        let (part, name) = route(path)
        return try part.attributes(name)
    }

    func attributes(handle: UInt64) throws -> NodeAttributes {
        let (part, file) = try opened(handle)
        return try part.attributes(of: file)
    }

    func list(_ path: String) throws -> [String] {
        let (part, name) = route(path)
        let names = try part.list(name)
        return part === files && name.isEmpty ? [ControlFolder.name] + names : names
    }

    func listWithAttributes(_ path: String) throws -> [(String, NodeAttributes)] {
        let prefix = path.hasSuffix("/") ? path : path + "/"
        return try list(path).compactMap { name in (try? attributes(prefix + name)).map { (name, $0) } }
    }

    func open(_ path: String, flags: Int32) throws -> MountOpenResult {
        let (part, name) = route(path)
        return register(try part.open(name, flags: flags), part)
    }

    func create(_ path: String, flags: Int32, mode: mode_t) throws -> MountOpenResult {
        let (part, name) = route(path)
        return register(try part.create(name, writeOnly: flags & O_ACCMODE == O_WRONLY), part)
    }

    func read(_ handle: UInt64, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64,
              stop: () -> Int32?) throws -> Int {
        let (part, file) = try opened(handle)
        return try part.read(file, into: buffer, at: offset, stop: stop)
    }

    func write(_ handle: UInt64, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        let (part, file) = try opened(handle)
        return try part.write(file, buffer, at: offset)
    }

    func truncate(_ path: String?, to length: Int64, handle: UInt64?) throws {
        let open = handle.flatMap { id in handleLock.withLock { handles[id] } }
        guard let path else {
            guard let open else { throw FileSystemError(EBADF) }
            return try open.part.truncate(nil, to: length, file: open.file)
        }
        let (part, name) = route(path)
        try part.truncate(name, to: length, file: open.flatMap { $0.part === part ? $0.file : nil })
    }

    func release(_ handle: UInt64) {
        guard let (part, file) = handleLock.withLock({ handles.removeValue(forKey: handle) }) else { return }
        part.release(file)
    }

    /// The bytes are in the spool as written; nothing is saved before the seal.
    func sync(_ path: String?, handle: UInt64?) throws {}

    func unlink(_ path: String) throws {
        let (part, name) = route(path)
        try part.unlink(name)
    }

    func makeFolder(_ path: String, mode: mode_t) throws {
        let (part, name) = route(path)
        try part.makeFolder(name)
    }

    func removeFolder(_ path: String) throws {
        let (part, name) = route(path)
        try part.removeFolder(name)
    }

    func rename(_ from: String, to: String, flags: RenameFlags) throws {
        let (fromPart, fromName) = route(from), (toPart, _) = route(to)
        guard fromPart === toPart else { throw FileSystemError(EXDEV) }
        try fromPart.rename(fromName, to: DataFiles.name(of: to), flags: flags)
    }

    func setTimes(_ path: String, accessed: timespec, modified: timespec) throws {
        let (part, name) = route(path)
        try part.setModified(name, to: nil)
    }

    /// `cp -p` and `chmod` ask; the modes are the mount's own.
    func setMode(_ path: String, _ mode: mode_t) throws {
        _ = try attributes(path)
        if sealer.isSealed { throw FileSystemError(EROFS) }
    }

    func setOwner(_ path: String, user: uid_t, group: gid_t) throws { throw FileSystemError(EPERM) }

    func fileSystemStatistics(_ path: String) throws -> statvfs {
        var stats = statvfs()
        stats.f_bsize = 4096
        stats.f_frsize = 4096
        stats.f_namemax = 255
        if sealer.isSealed { stats.f_flag = UInt(ST_RDONLY) }
        return stats
    }

    func start(invalidate: @escaping @Sendable (String) -> Void) {
        control.sealed = { invalidate("/") }
    }

    func stop() { control.sealed = nil }

    /// Unmount: seals when there are recipients and files (else says why nothing was written),
    /// then drops the key and the spool.
    func close(everyFileClosed: Bool) -> String? {
        handleLock.withLock { handles.removeAll() }
        let message = sealer.sealOnUnmount()
        spool.discard()
        return message
    }
}

import ASiC
import Foundation
import Signing

/// One mounted container, as the FUSE adaptor (and a browse mount, for each container folder)
/// sees it: a `MountSource` made of two parts behind one handle table. `.asicfs/…` goes to the
/// `ControlFolder`, every other path to the `DataFiles`; each part gets the name inside it and
/// answers only the operations it has (`MountPart`). The router also makes the mount's shared
/// pieces: the `MountClaim` a signing holds, the `SigningCoordinator`, the `LastError` record.
///
/// Why this shape: the data files (view, spools, commit) and the control folder (generated
/// files, requests, blocking reads) share nothing but the claim, the error record and the
/// snapshot they describe; apart, each can be driven from a test without FUSE, and a browse
/// mount hands a container's paths to that container's router as the kernel does to a mount.
public final class MountRouter: MountSource, @unchecked Sendable {
    let data: DataFiles
    let control: ControlFolder
    let signing: SigningCoordinator
    let claim: MountClaim
    let errors: LastError
    /// Open files: which part opened each, and that part's own open file. `handleLock` is a leaf.
    private let handleLock = NSLock()
    private var handles: [UInt64: (part: any MountPart, file: AnyObject)] = [:]
    private var nextHandle: UInt64 = 1

    /// Opens the container (failing with its one-line reason, which `asicfs mount` reports
    /// before it returns) and makes its parts; see `DataFiles.init` for the spool folder,
    /// `folder` and `lock`.
    public init(containerPath: String, readOnly: Bool, environment: SignatureEnvironment,
                lazySpoolFolder: Bool = false, folder: PinnedFolder? = nil, lock: ContainerLock? = nil) throws {
        errors = LastError()
        claim = MountClaim(readOnly: readOnly, errors: errors)
        data = try DataFiles(containerPath: containerPath, readOnly: readOnly, environment: environment, claim: claim,
                             errors: errors, lazySpoolFolder: lazySpoolFolder, folder: folder, lock: lock)
        claim.attach(data)
        signing = SigningCoordinator(claim: claim, environment: environment)
        control = ControlFolder(files: data, signing: signing, environment: environment)
    }

    /// The spool folders the daemon `pid` left beside `containerPath` (a killed daemon's).
    public static func spoolFoldersLeft(forContainer containerPath: String, daemon pid: Int32) -> [String] {
        SpoolFolder.leftBehind(forContainer: containerPath, daemon: pid)
    }

    // MARK: - Routing

    /// The part a mount path belongs to, and the name inside that part.
    private func route(_ path: String) -> (part: any MountPart, name: String) {
        let name = DataFiles.name(of: path)
        if let inner = ControlFolder.inner(name) { return (control, inner) }
        return (data, name)
    }

    private func register(_ part: any MountPart, _ opened: PartOpened) -> MountOpenResult {
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
        return part === data && name.isEmpty ? [ControlFolder.name] + names : names
    }

    func listWithAttributes(_ path: String) throws -> [(String, NodeAttributes)] {
        let names = try list(path)
        let prefix = path.hasSuffix("/") ? path : path + "/"
        return names.compactMap { name in (try? attributes(prefix + name)).map { (name, $0) } }
    }

    func open(_ path: String, flags: Int32) throws -> MountOpenResult {
        let (part, name) = route(path)
        return register(part, try part.open(name, flags: flags))
    }

    func create(_ path: String, flags: Int32, mode: mode_t) throws -> MountOpenResult {
        let (part, name) = route(path)
        return register(part, try part.create(name, writeOnly: flags & O_ACCMODE == O_WRONLY))
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

    /// fsync: everything pending is saved now.
    func sync(_ path: String?, handle: UInt64?) throws { try data.commit() }

    func unlink(_ path: String) throws {
        let (part, name) = route(path)
        try part.unlink(name)
    }

    func makeFolder(_ path: String, mode: mode_t = 0o755) throws {
        let (part, name) = route(path)
        try part.makeFolder(name)
    }

    func removeFolder(_ path: String) throws {
        let (part, name) = route(path)
        try part.removeFolder(name)
    }

    /// Within one part only: between the data files and the control folder, EXDEV.
    func rename(_ from: String, to: String, flags: RenameFlags) throws {
        let (fromPart, fromName) = route(from), (toPart, toName) = route(to)
        guard fromPart === toPart else { throw FileSystemError(EXDEV) }
        try fromPart.rename(fromName, to: toName, flags: flags)
    }

    /// Only the modification time is stored; the access time is accepted and forgotten.
    func setTimes(_ path: String, accessed: timespec, modified: timespec) throws {
        if modified.tv_nsec == FileTimes.omit { return }
        let date = modified.tv_nsec == FileTimes.now ? nil
            : Date(timeIntervalSince1970: TimeInterval(modified.tv_sec) + TimeInterval(modified.tv_nsec) / 1e9)
        let (part, name) = route(path)
        try part.setModified(name, to: date)
    }

    // Containers store no owners or modes: accept the calls `cp -a` and `rsync -a` make.
    func setMode(_ path: String, _ mode: mode_t) throws {}
    func setOwner(_ path: String, user: uid_t, group: gid_t) throws {}

    func makeSymlink(_ path: String, target: String) throws {
        throw errors.failure(EPERM, "cannot create the symbolic link '\(DataFiles.name(of: path))': a container holds only files")
    }

    func fileSystemStatistics(_ path: String) throws -> statvfs { data.fileSystemStatistics() }

    func start(invalidate: @escaping @Sendable (String) -> Void) {
        data.invalidate = invalidate
        data.scheduler = CommitScheduler(files: data)
    }

    func stop() { data.invalidate = nil }

    /// Stops a running signing, forgets every open file and saves (see `DataFiles.close`).
    @discardableResult
    func close(everyFileClosed: Bool = false) -> String? {
        signing.cancelAndWait()
        handleLock.withLock { handles.removeAll() }
        return data.close(everyFileClosed: everyFileClosed)
    }

    // MARK: - What a browse mount asks of a container it holds

    public var containerPath: String { data.containerPath }
    public var readOnly: Bool { data.readOnly }
    var currentSnapshot: Container { data.currentSnapshot }
    var dataFileCount: Int { data.dataFileCount }
    var hasPendingChanges: Bool { data.hasPendingChanges }
    var currentActivity: String? { claim.activity }
    func commit() throws { try data.commit() }
    func changedOnDiskWhileIdle() -> Bool { data.changedOnDiskWhileIdle() }

    /// What `status/last-error` and the signing status say, kept by a browse mount while it has
    /// the container closed (see `BrowseChildren`).
    struct Memory {
        let lastError: String
        let signing: SigningCoordinator.Memory
        var isEmpty: Bool { lastError.isEmpty && signing.isEmpty }
    }

    var memory: Memory { Memory(lastError: errors.text, signing: signing.memory) }

    func restore(_ memory: Memory) {
        errors.record(memory.lastError)
        signing.restore(memory.signing)
    }
}

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
public final class MountRouter: RoutedMount, @unchecked Sendable {
    let data: DataFiles
    let control: ControlFolder
    let signing: SigningCoordinator
    let claim: MountClaim
    let errors: LastError
    let parts: PartRouter

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
        parts = PartRouter(control: control, files: data)
    }

    /// The spool folders the daemon `pid` left beside `containerPath` (a killed daemon's).
    public static func spoolFoldersLeft(forContainer containerPath: String, daemon pid: Int32) -> [String] {
        SpoolFolder.leftBehind(forContainer: containerPath, daemon: pid)
    }

    // MARK: - MountSource (the rest forwards through RoutedMount)

    /// fsync: everything pending is saved now.
    func sync(_ path: String?, handle: UInt64?) throws { try data.commit() }

    /// Only the modification time is stored; the access time is accepted and forgotten.
    func setTimes(_ path: String, accessed: timespec, modified: timespec) throws {
        if modified.tv_nsec == FileTimes.omit { return }
        let date = modified.tv_nsec == FileTimes.now ? nil
            : Date(timeIntervalSince1970: TimeInterval(modified.tv_sec) + TimeInterval(modified.tv_nsec) / 1e9)
        let (part, name) = parts.route(path)
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
        parts.removeAll()
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

import ASiC
import CDOC
import Configuration
import Foundation

/// A new encrypted container being filled (`asicfs mount -o create new.cdoc2 MNT`, or `mkdir
/// new.cdoc2` in a browse mount): `.asicfs/…` goes to the `SealingControlFolder` (recipients,
/// seal), every other path to the `SealingFiles` (a flat writable folder whose bytes stay in the
/// `SealSpool`). The container file appears only when sealed (`Sealer`); unmounting seals when
/// there are recipients and files.
final class SealingMount: RoutedMount, @unchecked Sendable {
    let files: SealingFiles
    let control: SealingControlFolder
    let sealer: Sealer
    private let spool: SealSpool
    let parts: PartRouter
    /// Browse mode: the folder the container is written into, held while the folder is filled.
    private let folder: PinnedFolder?
    /// Who made it (browse mode: the folder's maker, who alone may fill it).
    let maker: (user: uid_t, group: gid_t)
    let mountedAt: Date

    /// `containerPath`: where the container is to be written (nothing there yet, or 0 bytes);
    /// in browse mode a name in the held `folder`, `shownPath` as the user names it, and the
    /// written file given to `maker`.
    init(containerPath: String, shownAs shownPath: String? = nil, folder: PinnedFolder? = nil,
         maker: (user: uid_t, group: gid_t)? = nil, format: EncryptedFormat, configuration: Configuration) throws {
        let errors = LastError()
        let mountedAt = Date()
        self.mountedAt = mountedAt
        self.folder = folder
        self.maker = maker ?? (geteuid(), getegid())
        spool = try SealSpool(containerPath: containerPath)
        let sealer = Sealer(containerPath: containerPath, shownAs: shownPath, owner: maker, format: format, spool: spool,
                            configuration: configuration, errors: errors)
        self.sealer = sealer
        files = SealingFiles(spool: spool, mountedAt: mountedAt, isSealed: { sealer.isSealed })
        control = SealingControlFolder(sealer: sealer, errors: errors, mountedAt: mountedAt)
        parts = PartRouter(control: control, files: files)
    }

    // MARK: - MountSource (the rest forwards through RoutedMount)

    /// The bytes are in the spool as written; nothing is saved before the seal.
    func sync(_ path: String?, handle: UInt64?) throws {}

    func setTimes(_ path: String, accessed: timespec, modified: timespec) throws {
        let (part, name) = parts.route(path)
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

    /// Browse mode: told when sealed (the child is then opened again as the container written).
    var onSealed: (@Sendable () -> Void)?

    func start(invalidate: @escaping @Sendable (String) -> Void) {
        control.sealed = { [weak self] in
            self?.onSealed?()
            invalidate("/")
        }
    }

    func stop() { control.sealed = nil }

    /// Unmount: seals when there are recipients and files (else says why nothing was written),
    /// then drops the key and the spool.
    func close(everyFileClosed: Bool) -> String? {
        parts.removeAll()
        let message = sealer.sealOnUnmount()
        spool.discard()
        return message
    }

    /// rmdir of the folder before it was sealed: nothing is written, and nothing said.
    func discard() {
        parts.removeAll()
        sealer.forget()
        spool.discard()
    }
}

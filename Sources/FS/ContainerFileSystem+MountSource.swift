import ASiC
import Foundation

/// One container as the whole mount: the calls the adaptor makes that `ContainerFileSystem`
/// answers in container terms (a container stores no owners, modes, links or access times).
extension ContainerFileSystem: MountSource {
    func create(_ path: String, flags: Int32, mode: mode_t) throws -> OpenResult {
        try create(path, writeOnly: flags & O_ACCMODE == O_WRONLY)
    }

    func makeFolder(_ path: String, mode: mode_t) throws { try makeFolder(path) }

    func sync(_ path: String?, handle: UInt64?) throws { try commit() }

    /// Only the modification time is stored; the access time is accepted and forgotten.
    func setTimes(_ path: String, accessed: timespec, modified: timespec) throws {
        if modified.tv_nsec == FileTimes.omit { return }
        let date = modified.tv_nsec == FileTimes.now ? nil
            : Date(timeIntervalSince1970: TimeInterval(modified.tv_sec) + TimeInterval(modified.tv_nsec) / 1e9)
        try setModified(path, to: date)
    }

    // Containers store no owners or modes: accept the calls `cp -a` and `rsync -a` make.
    func setMode(_ path: String, _ mode: mode_t) throws {}
    func setOwner(_ path: String, user: uid_t, group: gid_t) throws {}

    func makeSymlink(_ path: String, target: String) throws {
        throw failure(EPERM, "cannot create the symbolic link '\(Self.name(of: path))': a container holds only files")
    }

    func readSymlink(_ path: String) throws -> String { throw FileSystemError(EINVAL) }

    /// A ZIP entry has one name.
    func link(_ path: String, to newPath: String) throws { throw FileSystemError(EPERM) }

    // asicfs keeps no extended attributes of its own: what cp -a and rsync -X try to set is not kept.
    func setExtendedAttribute(_ path: String, name: String, value: [UInt8], flags: Int32) throws {
        throw FileSystemError(ENOTSUP)
    }

    func removeExtendedAttribute(_ path: String, name: String) throws { throw FileSystemError(ENOTSUP) }

    func fileSystemStatistics(_ path: String) throws -> statvfs { fileSystemStatistics() }

    func start(invalidate: @escaping @Sendable (String) -> Void) {
        self.invalidate = invalidate
        scheduler = CommitScheduler(fileSystem: self)
    }

    func stop() { invalidate = nil }
}

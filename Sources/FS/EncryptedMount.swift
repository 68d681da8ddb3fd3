import ASiC
import CDOC
import Configuration
import Foundation

/// One mounted encrypted container (CDOC 1.x or CDOC2, told by content), as the FUSE adaptor
/// sees it: `.asicfs/…` goes to the `EncryptedControlFolder` (recipients, decrypt requests), every
/// other path to the `EncryptedFiles` (nothing until decrypted, then the files, read-only). The
/// two share the `DecryptionCoordinator`, the `EncryptedSpool` and the `LastError` record.
/// Changes to the files are refused with EROFS.
public final class EncryptedMount: RoutedMount, @unchecked Sendable {
    let files: EncryptedFiles
    let control: EncryptedControlFolder
    let decryption: DecryptionCoordinator
    private let spool: EncryptedSpool
    private let descriptor: Int32
    /// The file opened (browse mode checks it is the one at the name, and shows its owner).
    let openedStatus: stat
    /// The container as the user names it (in browse mode it is opened through a held folder).
    public let containerPath: String
    /// Browse mode: the container's folder, held while it is open (the spool folder is made there).
    private let folder: PinnedFolder?
    let parts: PartRouter

    /// Whether the file at `path` is an encrypted container (browse mode's first look): a CDOC2
    /// whose header reads (a broken one is shown as the file it is from the start, as a broken
    /// ZIP), or XML (CDOC 1.x: its reader takes the whole file, too costly for a listing).
    static func opensAsEncrypted(_ path: String) -> Bool {
        guard let family = family(path) else { return false }
        guard family == .cdoc2 else { return true }
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return true }  // cannot tell now: entering it says why
        defer { Glibc.close(descriptor) }
        return (try? EncryptedContainer.open(descriptor: descriptor)) != nil
    }

    /// Whether the file at `path` is an encrypted container, by its first bytes (never its name).
    public static func isEncrypted(_ path: String) -> Bool { family(path) != nil }

    private static func family(_ path: String) -> EncryptedFormat.Family? {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        var prefix = [UInt8](repeating: 0, count: 64)
        let count = prefix.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        return count > 0 ? EncryptedFormat.family(ofPrefix: Array(prefix[..<count])) : nil
    }

    /// Opens the container and reads its header (a bad one fails with its one line, which
    /// `asicfs mount` reports); nothing is decrypted yet.
    public init(containerPath: String, shownAs shownPath: String? = nil, folder: PinnedFolder? = nil,
                configuration: Configuration) throws {
        self.containerPath = shownPath ?? containerPath
        self.folder = folder
        descriptor = Glibc.open(containerPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw FileSystemError(errno, "cannot open \(PrintableText.escaped(shownPath ?? containerPath))") }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            Glibc.close(descriptor)
            throw FileSystemError(EINVAL, "\(PrintableText.escaped(shownPath ?? containerPath)) is not a regular file")
        }
        openedStatus = status
        let reader: EncryptedContainerReader
        do { reader = try EncryptedContainer.open(descriptor: descriptor) } catch {
            Glibc.close(descriptor)
            throw error
        }
        let errors = LastError()
        let mountedAt = Date()
        spool = try EncryptedSpool(containerPath: containerPath)
        decryption = DecryptionCoordinator(reader: reader, spool: spool, configuration: configuration, errors: errors)
        files = EncryptedFiles(spool: spool, mountedAt: mountedAt)
        control = EncryptedControlFolder(decryption: decryption, errors: errors, mountedAt: mountedAt)
        parts = PartRouter(control: control, files: files)
    }

    deinit { Glibc.close(descriptor) }

    // MARK: - MountSource (the rest forwards through RoutedMount)

    /// Nothing is ever pending: the container is only read.
    func sync(_ path: String?, handle: UInt64?) throws {}

    func setTimes(_ path: String, accessed: timespec, modified: timespec) throws {
        let (part, name) = parts.route(path)
        _ = try part.attributes(name)
        throw FileSystemError(part === parts.files ? EROFS : EPERM)
    }

    func setMode(_ path: String, _ mode: mode_t) throws { throw FileSystemError(EROFS) }
    func setOwner(_ path: String, user: uid_t, group: gid_t) throws { throw FileSystemError(EROFS) }
    func makeSymlink(_ path: String, target: String) throws { throw FileSystemError(EROFS) }
    func link(_ path: String, to newPath: String) throws { throw FileSystemError(EROFS) }

    func fileSystemStatistics(_ path: String) throws -> statvfs {
        var stats = statvfs()
        stats.f_bsize = 4096
        stats.f_frsize = 4096
        stats.f_namemax = 255
        stats.f_flag = UInt(ST_RDONLY)
        return stats
    }

    func start(invalidate: @escaping @Sendable (String) -> Void) {
        // The files appear at once: the kernel must ask again for the root's entries.
        decryption.decrypted = { invalidate("/") }
    }

    func stop() { decryption.decrypted = nil }

    /// Unmount: drops the key and the spool (see `DecryptionCoordinator.close`).
    func close(everyFileClosed: Bool) -> String? {
        parts.removeAll()
        decryption.close()
        return nil
    }
}

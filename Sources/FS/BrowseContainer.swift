import Foundation

/// What a browse mount asks of a container it holds as a folder (a "child", `BrowseChildren`):
/// a signature container's `MountRouter`, an encrypted container's `EncryptedMount`, or a new
/// encrypted container being filled (`mkdir new.cdoc2`), a `SealingMount`.
protocol BrowseContainer: MountSource {
    var containerPath: String { get }
    var readOnly: Bool { get }
    var hasPendingChanges: Bool { get }
    /// Something that must not be cut short by closing the child when idle (a signing; a
    /// decrypted container, whose key and files would go).
    var currentActivity: String? { get }
    /// Whether rmdir of its folder may remove the file: an unsigned container with no data files.
    var isEmptyAndUnsigned: Bool { get }
    /// The owner and identity of the file it opened.
    var openedOwner: (user: uid_t, group: gid_t) { get }
    var openedFile: (device: UInt64, inode: UInt64) { get }
    /// The names of the files it shows (their kernel cache is dropped when it is let go).
    var shownFileNames: [String] { get }
    /// What status files say that must outlive closing it when idle (nil: nothing).
    var keptMemory: MountRouter.Memory? { get }
    func restore(_ memory: MountRouter.Memory)
    func commit() throws
    func changedOnDiskWhileIdle() -> Bool
    /// A new encrypted container not sealed yet: no file on disk; only its maker may enter it.
    var awaitsSeal: Bool { get }
}

extension BrowseContainer {
    var awaitsSeal: Bool { false }

    @discardableResult
    func close() -> String? { close(everyFileClosed: false) }
}

extension MountRouter: BrowseContainer {
    var isEmptyAndUnsigned: Bool { dataFileCount == 0 && !currentSnapshot.isSigned }
    var openedOwner: (user: uid_t, group: gid_t) { currentSnapshot.openedOwner }
    var openedFile: (device: UInt64, inode: UInt64) { currentSnapshot.openedFile }
    var shownFileNames: [String] { currentSnapshot.dataFiles.map(\.name) }
    var keptMemory: MountRouter.Memory? { memory }
}

extension EncryptedMount: BrowseContainer {
    var readOnly: Bool { true }
    var hasPendingChanges: Bool { false }
    var currentActivity: String? { decryption.isIdle ? nil : "decrypted (closing it would drop the decrypted files)" }
    var isEmptyAndUnsigned: Bool { false }
    var openedOwner: (user: uid_t, group: gid_t) { (openedStatus.st_uid, openedStatus.st_gid) }
    var openedFile: (device: UInt64, inode: UInt64) { (UInt64(openedStatus.st_dev), UInt64(openedStatus.st_ino)) }
    var shownFileNames: [String] { files.spool.files.map(\.name) }
    var keptMemory: MountRouter.Memory? { nil }
    func restore(_ memory: MountRouter.Memory) {}
    func commit() throws {}
    /// An encrypted container is only read: a change on disk is seen when it is opened again.
    func changedOnDiskWhileIdle() -> Bool { false }
}

/// `mkdir new.cdoc2` in a browse folder: filled, then sealed into its file. Until then it is
/// never let go (its files exist only in its spool, under a key in memory); once sealed, the
/// file on disk is what the folder shows, so the child is opened again as an `EncryptedMount`.
extension SealingMount: BrowseContainer {
    var containerPath: String { sealer.shownPath }
    var readOnly: Bool { sealer.isSealed }
    var hasPendingChanges: Bool { false }
    var currentActivity: String? { sealer.isSealed ? nil : "not sealed yet (closing it would drop its files)" }
    /// rmdir removes an unsealed one with no files (recipients alone are no content).
    var isEmptyAndUnsigned: Bool { !sealer.isSealed && files.spool.names.isEmpty }
    var openedOwner: (user: uid_t, group: gid_t) { maker }
    /// No file opened: browse mode does not compare it with one (`BrowseFileSystem.startSealing`).
    var openedFile: (device: UInt64, inode: UInt64) { (0, 0) }
    var shownFileNames: [String] { files.spool.names }
    var keptMemory: MountRouter.Memory? { nil }
    func restore(_ memory: MountRouter.Memory) {}
    func commit() throws {}
    func changedOnDiskWhileIdle() -> Bool { sealer.isSealed }
    var awaitsSeal: Bool { !sealer.isSealed }
}

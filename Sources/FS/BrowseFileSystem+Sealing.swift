import ASiC
import Foundation

/// Browse mode: `mkdir NAME.cdoc2` (or `.cdoc`) makes a new encrypted container, a
/// `SealingMount` child with no file yet. Its maker copies files in and writes recipients to
/// its `.asicfs/recipients`; `echo seal > .asicfs/seal` (or the unmount) writes the container
/// into the folder it was made in, through that folder held open (`PinnedFolder`), never by a
/// path another user could swap. Until then the folder is its maker's alone (mode 0700, and
/// another user is refused even without default_permissions): its files exist only in the
/// child's encrypted spool. Sealed, it is opened again as the container written (read-only).
extension BrowseFileSystem {
    /// Starts the new encrypted container `relative` (the caller checked the name is free and
    /// that it may make files in its folder); its maker is the caller.
    func startSealing(_ relative: String) throws {
        guard let format = Sealer.format(forNewContainer: relative) else { throw FileSystemError(EINVAL) }
        let shown = folder.full(relative)
        let pinned = try PinnedFolder(descriptor: folder.parentDescriptor(relative), shownPath: PathText.folder(of: shown))
        let sealing = try SealingMount(containerPath: pinned.pinned(PathText.lastComponent(of: relative)), shownAs: shown,
                                       folder: pinned, maker: CallerRights.ownerOfNewFiles, format: format,
                                       configuration: environment.configuration)
        sealing.onSealed = { [weak self] in self?.children.checkSoon(relative) }
        startServing(sealing, at: relative)
        do { try children.insert(relative, sealing) } catch {
            sealing.discard()
            throw error
        }
    }

    /// The folder of an unsealed one: its maker's, 0700 (what is in it is plaintext).
    func sealingFolderAttributes(_ child: BrowseChild) -> NodeAttributes {
        var st = stat()
        st.st_mode = S_IFDIR | 0o700
        st.st_nlink = 2
        (st.st_uid, st.st_gid) = child.owner
        let created = (child.router as? SealingMount)?.mountedAt ?? Date()
        let seconds = created.timeIntervalSince1970.rounded(.down)
        let time = timespec(tv_sec: time_t(seconds), tv_nsec: Int((created.timeIntervalSince1970 - seconds) * 1e9))
        (st.st_mtim, st.st_ctim, st.st_atim) = (time, time, time)
        return NodeAttributes(native: st)
    }

    /// Only its maker (or the daemon's user) enters an unsealed one.
    func checkCallerIsMaker(_ child: BrowseChild) throws {
        if let caller = CallerRights.foreignCaller, caller.user != child.owner.user { throw FileSystemError(EACCES) }
    }

    /// rmdir of an unsealed one: only when it holds no files; nothing is written.
    func removeUnsealed(_ child: BrowseChild) throws {
        guard let sealing = child.router as? SealingMount else { throw FileSystemError(EIO) }
        try checkCallerIsMaker(child)
        if !sealing.isEmptyAndUnsigned { throw FileSystemError(ENOTEMPTY) }
        guard try children.takeOut(child.relative, pinnedByCaller: 1) != nil else { return }
        sealing.discard()
    }

    /// A rename before the seal: the container's name is where it is to be written.
    static func notSealedYet(_ child: BrowseChild) -> FileSystemError {
        FileSystemError(EBUSY, "cannot rename \(PrintableText.escaped(child.relative)) before it is sealed (echo seal > .asicfs/seal, then rename)")
    }
}

import ASiC
import Foundation
import Signing

/// Browse mode (`asicfs mount FOLDER MOUNTPOINT`): the folder tree as it is, except that every
/// `.asice`, `.sce`, `.bdoc` and `.asics` file (any letter case) that is a container appears as
/// a folder with the layout of a single mount. A layer over `MountSource`, not a second
/// filesystem: a path is split once into the part in the real folder and the part inside a
/// container; the first part is served by `PassThroughFolder` (POSIX calls relative to the
/// folder's descriptor, errors as they are), the second by the container's own
/// `MountRouter` (a "child", see `BrowseChildren`) with the rest of the path.
///
/// - Lazy: a child is opened when a request enters its folder, never at mount. Listing a
///   folder of containers costs one lstat and one 4-byte read per container file (does it
///   start like a ZIP?); a container folder's size, times and owner are its file's. A file with
///   a container's name that does not open as a container is shown as the file it is.
/// - Bounded: at most `openContainers` children stay open; idle ones are saved and closed.
/// - Outside changes: a child is compared with its file (inode, size, mtime) at most once a
///   second and opened again when the file changed while it had nothing unsaved. With unsaved
///   changes the single-mount rule holds: they are never saved over the other program's change
///   (the save fails, status/last-error says why), and at unmount they are moved into
///   `<container>.asicfs-unsaved-<time>/`.
/// - Safe to share (`-o allow_other`, a root daemon from fstab): a real file is never reached
///   through a symbolic link, and every call on one runs with the rights of the user who asked
///   (`PassThroughFolder`, `CallerRights`); a container is entered only by a user who may read
///   its file, and served only if the file the core opened is the one at its name.
///   `user.asicfs.*` is asicfs's own verdict: never passed through from a real file.
/// - Handles are ours: a browse handle is a real descriptor or (child, the child's handle).
/// - `mkdir NAME.asice` makes a container (on disk with its first file); `mkdir NAME.cdoc2` (or
///   `.cdoc`) a new encrypted one, on disk when sealed (`BrowseFileSystem+Sealing`).
/// - Between containers (and between a container and a real folder) a rename is EXDEV, so
///   `mv` copies and removes; each container keeps its own rules (signed: EPERM).
///
/// Why the high-level (path) FUSE API: libfuse keeps the node tree and hands us whole paths; the
/// split costs a scan of the path and one lstat for a component with a container's name, and
/// nothing for paths inside an open child checked within the last second. The single-container
/// engine, its tests and its cache rules are path-based; one engine serves both modes, and the
/// targets (Benchmarks/results) are met without node ids of our own.
public final class BrowseFileSystem: MountSource, @unchecked Sendable {
    public static let defaultOpenContainers = 64
    /// Shown as folders (`.asics`: read-only).
    static let containerExtensions: Set<String> = Set(["asice", "sce", "bdoc", "asics"]).union(encryptedExtensions)
    /// Encrypted containers (CDOC 1.x, CDOC2; read-only folders), told by content at the first look.
    static let encryptedExtensions: Set<String> = ["cdoc", "cdoc2"]
    /// `mkdir NAME.<ext>` makes a new container.
    static let creatableExtensions: Set<String> = ["asice", "sce", "bdoc"]
    /// `mkdir NAME.<ext>` makes a new encrypted container, written when sealed (`SealingMount`).
    static let sealableExtensions: Set<String> = encryptedExtensions

    let folder: PassThroughFolder
    let readOnly: Bool
    let environment: SignatureEnvironment
    let children: BrowseChildren
    let lock = NSLock()
    var handles: [UInt64: Handle] = [:]
    private var nextHandle: UInt64 = 1
    /// Containers made with mkdir that hold no file yet: in memory only, until a file is put in.
    var newContainers: [String: NewContainer] = [:]
    /// Real files removed while open (libfuse renames them to `.fuse_hidden…`; we unlink them at
    /// once instead of leaving such names in the user's folder): that name -> a descriptor.
    var removedWhileOpen: [String: Int32] = [:]
    private var invalidator: (@Sendable (String) -> Void)?

    /// An open file: a real descriptor, or a handle of a child.
    enum Handle {
        case plain(PlainFile)
        case child(BrowseChild, UInt64)
    }

    final class PlainFile {
        let fd: Int32
        /// Its path now (renames change it), so `rm` of an open file can find its descriptor.
        var relative: String
        init(fd: Int32, relative: String) {
            self.fd = fd
            self.relative = relative
        }
    }

    /// A container made with mkdir: when, and who will own its file (who made it).
    struct NewContainer {
        let created: Date
        let owner: uid_t
        let group: gid_t

        init() {
            created = Date()
            (owner, group) = CallerRights.ownerOfNewFiles
        }
    }

    /// Where a path leads.
    enum Place {
        /// In the real folder (relative path, "." for the top).
        case plain(String)
        /// A container's folder whose child is not open (the file's status).
        case container(String, stat)
        /// In (or, with inner "/", at) an open child, pinned for this request.
        case child(BrowseChild, String)
        /// In a container made with mkdir that is not on disk yet.
        case newContainer(String, String)
    }

    public init(folder path: String, readOnly: Bool, environment: SignatureEnvironment,
                openContainers: Int = BrowseFileSystem.defaultOpenContainers) throws {
        let folder = try PassThroughFolder(path)
        self.folder = folder
        self.readOnly = readOnly
        self.environment = environment
        children = BrowseChildren(root: path, limit: openContainers)
        children.opener = { [weak self] relative in
            guard let self else { throw FileSystemError(EIO) }
            return try makeChild(relative)
        }
        children.reopened = { [weak self] child in self?.forgetCachedContent(of: child) }
        children.letGo = { [weak self] child in self?.forgetCachedContent(of: child) }
    }

    // MARK: - Names and places

    private static func containerExtension(_ name: Substring) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...].lowercased()
        return containerExtensions.contains(ext) ? ext : nil
    }

    static func isContainerName(_ name: Substring) -> Bool { containerExtension(name) != nil }

    static func isReadOnlyName(_ relative: String) -> Bool {
        containerExtension(Substring(PathText.lastComponent(of: relative))).map { $0 == "asics" || encryptedExtensions.contains($0) } ?? false
    }

    static func isEncryptedName(_ relative: String) -> Bool {
        containerExtension(Substring(PathText.lastComponent(of: relative))).map(encryptedExtensions.contains) ?? false
    }

    static func isSealableName(_ relative: String) -> Bool {
        containerExtension(Substring(PathText.lastComponent(of: relative))).map(sealableExtensions.contains) ?? false
    }

    static func isCreatableName(_ relative: String) -> Bool {
        containerExtension(Substring(PathText.lastComponent(of: relative))).map(creatableExtensions.contains) ?? false
    }

    /// Our own spool folders (`.NAME.asicfs-spool-PID-XXXXXX`) and save temporaries (a daemon
    /// killed mid-save leaves one; the next save beside it removes it) are not shown.
    static func isHidden(_ name: String) -> Bool {
        SpoolFolder.isSpoolFolderName(name) || AtomicSave.isTemporaryName(name)
    }

    /// Whether a regular file with a container's name is a container: known, or decided at the
    /// first look by opening it. A ZIP that is no container is a file from the start, not a
    /// folder the kernel caches until entering it fails (`find`'s one "Not a directory").
    func looksLikeContainer(_ relative: String, _ status: stat) -> Bool {
        if let known = children.verdict(relative, status) { return known }
        let isContainer = Self.isEncryptedName(relative) ? EncryptedMount.opensAsEncrypted(folder.full(relative))
            : folder.startsLikeZIP(relative) && opensAsContainer(relative)
        children.record(relative, status, isContainer: isContainer)
        return isContainer
    }

    /// False only when the file is certainly no container; what cannot be told now (busy, an
    /// I/O error) is left to opening the child, which says it.
    private func opensAsContainer(_ relative: String) -> Bool {
        do {
            _ = try Container.open(folder.full(relative))
            return true
        } catch let error as ContainerError {
            switch error {
            case .io, .refused: return true
            default: return false
            }
        } catch {
            return true
        }
    }

    /// Splits a path: the first component with a container's name that is a container file (or
    /// a new container) ends the real part. `enter`: open the child even for the folder itself.
    func resolve(_ path: String, enter: Bool) throws -> Place {
        let relative = path.drop { $0 == "/" }
        if relative.isEmpty { return .plain(".") }
        var start = relative.startIndex
        while start < relative.endIndex {
            let end = relative[start...].firstIndex(of: "/") ?? relative.endIndex
            if Self.isContainerName(relative[start..<end]) {
                let container = String(relative[..<end])
                let inner = end == relative.endIndex ? "/" : String(relative[end...])
                if lock.withLock({ newContainers[container] != nil }) { return .newContainer(container, inner) }
                let wanted = enter || inner != "/"
                if let open = children.peek(container) {
                    if wanted { try open.router.awaitsSeal ? checkCallerIsMaker(open) : checkCallerMayRead(container) }
                    if let child = wanted ? try children.acquire(container, status: nil) : children.existing(container) {
                        return .child(child, inner)
                    }
                }
                if let status = folder.statusIfAny(container), status.st_mode & S_IFMT == S_IFREG,
                   looksLikeContainer(container, status) {
                    if !wanted { return .container(container, status) }
                    try checkCallerMayRead(container)
                    if let child = try children.acquire(container, status: status) { return .child(child, inner) }
                    // It starts like one but does not open: a file from now on. The kernel takes
                    // it for a folder until its entry expires (a second); invalidating the inode
                    // instead would make a stat of it fail (EIO: the type changed).
                }
            }
            start = end < relative.endIndex ? relative.index(after: end) : end
        }
        return .plain(String(relative))
    }

    /// The daemon opens containers with its own rights: another user (allow_other) enters only
    /// one whose file they may read now (the kernel never sees that file opened, so cannot check).
    private func checkCallerMayRead(_ container: String) throws {
        if CallerRights.foreignCaller != nil { try folder.access(container, R_OK) }
    }

    /// Runs `body` with the place of `path`; a child it pinned is unpinned afterwards.
    func withPlace<T>(_ path: String, enter: Bool = true, _ body: (Place) throws -> T) throws -> T {
        let place = try resolve(path, enter: enter)
        defer { if case .child(let child, _) = place { children.unpin(child) } }
        return try body(place)
    }

    // MARK: - Kernel cache

    /// Invalidation from another thread: the request that noticed may hold the kernel locks
    /// (a folder's, a page's) that invalidating would wait for.
    func invalidateLater(_ path: String) {
        guard let invalidator = lock.withLock({ invalidator }) else { return }
        DispatchQueue.global().async { invalidator(path) }
    }

    /// A child opened again after another program changed its file, or let go when idle (the
    /// file may change before it opens again): the kernel may hold pages and attributes of the
    /// old data files (read with keep_cache).
    private func forgetCachedContent(of child: BrowseChild) {
        let folderPath = "/" + child.relative
        invalidateLater(folderPath)
        for name in child.router.shownFileNames { invalidateLater(folderPath + "/" + name) }
    }

    /// Opens a child with what a mounted container has: its kernel-cache callback (with the
    /// container folder's place in the mount before its paths) and its save schedule.
    private func makeChild(_ relative: String) throws -> any BrowseContainer {
        TestHooks.holdContainerOpen()
        let path = folder.full(relative)
        // The container's folder, reached without links and held for as long as the container
        // is open: its saves, spool folder and rescue go there (with the daemon's rights),
        // whatever another user does to the folder's path meanwhile (PinnedFolder).
        let pinned = try PinnedFolder(descriptor: folder.parentDescriptor(relative), shownPath: PathText.folder(of: path))
        if Self.isEncryptedName(relative) { return try makeEncryptedChild(relative, pinned: pinned) }
        // Another program holding the container (or a hard link to one open here) makes it busy
        // for now, not "not a container".
        let lock: ContainerLock
        do { lock = try ContainerLock.acquire(pinned.pinned(PathText.lastComponent(of: relative)), shownAs: path) }
        catch ContainerError.refused(let holder) {
            throw BrowseChildren.Busy(reason: holder)
        }
        let child: MountRouter
        do {
            child = try MountRouter(containerPath: path, readOnly: readOnly || Self.isReadOnlyName(relative),
                                    environment: environment, lazySpoolFolder: true, folder: pinned, lock: lock)
        } catch {
            lock.release()
            throw error
        }
        return try served(child, at: relative)
    }

    /// An encrypted container's child: only read, so no lock; opened in the held folder without
    /// following a link, and served only if it is the file at that name (as `makeChild`).
    private func makeEncryptedChild(_ relative: String, pinned: PinnedFolder) throws -> EncryptedMount {
        let child = try EncryptedMount(containerPath: pinned.pinned(PathText.lastComponent(of: relative)),
                                       shownAs: folder.full(relative), folder: pinned, configuration: environment.configuration)
        return try served(child, at: relative)
    }

    /// A child is served only if the file it opened in the held folder is the one at that name
    /// reached without links from the top (else the container file itself was swapped for a
    /// link, after the caller's right to read the name was checked); its changes invalidate the
    /// kernel's cache below its folder.
    private func served<Child: BrowseContainer>(_ child: Child, at relative: String) throws -> Child {
        guard let reached = folder.fileIdentity(relative), reached == child.openedFile else {
            _ = child.close()
            throw FileSystemError(EACCES)
        }
        startServing(child, at: relative)
        return child
    }

    /// Starts a child: its changes invalidate the kernel's cache below its folder.
    func startServing(_ child: any BrowseContainer, at relative: String) {
        let prefix = "/" + relative
        child.start { [weak self] path in
            guard let invalidator = self?.lock.withLock({ self?.invalidator }) else { return }
            invalidator(prefix + path)
        }
    }

    // MARK: - Attributes and listings

    /// A container's folder: its file's status, as a folder (x where r; no w when it cannot change).
    func folderAttributes(_ relative: String, _ status: stat, child: BrowseChild?) -> NodeAttributes {
        var st = status
        var mode = st.st_mode & 0o777
        mode |= (mode & 0o444) >> 2
        let childWritable = child.map { ((try? $0.router.attributes("/"))?.permissions ?? 0) & 0o200 != 0 }
        if readOnly || Self.isReadOnlyName(relative) || childWritable == false { mode &= ~0o222 }
        // Whoever may read an encrypted file may not read what its owner decrypted (allow_other).
        if Self.isEncryptedName(relative) { mode &= 0o700 }
        st.st_mode = S_IFDIR | mode
        st.st_nlink = 2
        return NodeAttributes(native: st)
    }

    /// A new container's folder: its maker's, as its file will be.
    func newContainerAttributes(_ made: NewContainer) -> NodeAttributes {
        var st = stat()
        st.st_mode = S_IFDIR | 0o755
        st.st_nlink = 2
        st.st_uid = made.owner
        st.st_gid = made.group
        let seconds = made.created.timeIntervalSince1970.rounded(.down)
        let time = timespec(tv_sec: time_t(seconds), tv_nsec: Int((made.created.timeIntervalSince1970 - seconds) * 1e9))
        (st.st_mtim, st.st_ctim, st.st_atim) = (time, time, time)
        return NodeAttributes(native: st)
    }

    public func attributes(_ path: String) throws -> NodeAttributes {
        try withPlace(path, enter: false) { place in
            switch place {
            case .plain(let relative):
                if let fd = hiddenDescriptor(relative) { return try Self.status(of: fd) }
                return NodeAttributes(native: try folder.status(relative))
            case .container(let relative, let status):
                return folderAttributes(relative, status, child: nil)
            case .child(let child, "/") where child.router.awaitsSeal:
                return sealingFolderAttributes(child)
            case .child(let child, "/"):
                let status = try folder.status(child.relative)
                child.owner = (status.st_uid, status.st_gid)
                return folderAttributes(child.relative, status, child: child)
            case .child(let child, let inner):
                return child.attributes(inner, try child.router.attributes(inner))
            case .newContainer(let relative, "/"):
                return newContainerAttributes(lock.withLock { newContainers[relative] } ?? NewContainer())
            case .newContainer:
                throw FileSystemError(ENOENT)
            }
        }
    }

    static func status(of fd: Int32) throws -> NodeAttributes {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw FileSystemError(errno) }
        return NodeAttributes(native: st)
    }

    public func attributes(handle id: UInt64) throws -> NodeAttributes {
        switch try handle(id) {
        case .plain(let file): return try Self.status(of: file.fd)
        case .child(let child, let inner):
            return try child.router.attributes(handle: inner).owned(by: child.owner)
        }
    }

    public func list(_ path: String) throws -> [String] {
        try listWithAttributes(path, attributes: false).map(\.0)
    }

    public func listWithAttributes(_ path: String) throws -> [(String, NodeAttributes)] {
        try listWithAttributes(path, attributes: true)
    }

    private func listWithAttributes(_ path: String, attributes: Bool) throws -> [(String, NodeAttributes)] {
        try withPlace(path) { place in
            switch place {
            case .plain(let relative):
                return try listFolder(relative, attributes: attributes)
            case .child(let child, let inner):
                if attributes {
                    let prefix = inner.hasSuffix("/") ? inner : inner + "/"
                    return try child.router.listWithAttributes(inner).map { ($0, child.attributes(prefix + $0, $1)) }
                }
                return try child.router.list(inner).map { ($0, NodeAttributes.directory(0, Date(timeIntervalSince1970: 0))) }
            case .newContainer(_, "/"):
                return []
            case .newContainer, .container:
                throw FileSystemError(ENOENT)
            }
        }
    }

    /// A real folder: its entries (our spool folders left out), container files as folders, and
    /// the new containers made in it with mkdir.
    private func listFolder(_ relative: String, attributes: Bool) throws -> [(String, NodeAttributes)] {
        let prefix = relative == "." ? "" : relative + "/"
        var result: [(String, NodeAttributes)] = []
        var names: Set<String> = []
        for (name, status) in try folder.entries(relative) where !Self.isHidden(name) {
            names.insert(name)
            if status.st_mode & S_IFMT == S_IFREG, Self.isContainerName(Substring(name)),
               looksLikeContainer(prefix + name, status) {
                result.append((name, folderAttributes(prefix + name, status, child: children.peek(prefix + name))))
            } else {
                result.append((name, NodeAttributes(native: status)))
            }
        }
        let made = lock.withLock { newContainers.filter { PathText.parent(of: $0.key) == (relative == "." ? "" : relative) } }
        for (container, created) in made {
            let name = PathText.lastComponent(of: container)
            if !names.contains(name) { result.append((name, newContainerAttributes(created))) }
        }
        for child in children.awaitingSeal(below: relative) where PathText.parent(of: child.relative) == (relative == "." ? "" : relative) {
            let name = PathText.lastComponent(of: child.relative)
            if !names.contains(name) { result.append((name, sealingFolderAttributes(child))) }
        }
        return result
    }

    // MARK: - Handles, reading and writing

    func register(_ handle: Handle) -> UInt64 {
        lock.withLock {
            let id = nextHandle
            nextHandle += 1
            handles[id] = handle
            return id
        }
    }

    func handle(_ id: UInt64) throws -> Handle {
        guard let handle = lock.withLock({ handles[id] }) else { throw FileSystemError(EBADF) }
        return handle
    }

    /// A child's handle, as a browse handle (the child stays open while it is).
    private func wrap(_ child: BrowseChild, _ opened: MountOpenResult) -> MountOpenResult {
        children.opened(child)
        return .init(handle: register(.child(child, opened.handle)), keepCache: opened.keepCache, directIO: opened.directIO)
    }

    private func plain(_ fd: Int32, _ relative: String) -> MountOpenResult {
        .init(handle: register(.plain(PlainFile(fd: fd, relative: relative))), keepCache: false, directIO: false)
    }

    func open(_ path: String, flags: Int32) throws -> MountOpenResult {
        try withPlace(path) { place in
            switch place {
            case .plain(let relative):
                if let fd = hiddenDescriptor(relative) { return plain(try folder.reopen(fd, flags: flags), relative) }
                return plain(try folder.open(relative, flags: flags), relative)
            case .child(let child, let inner):
                return wrap(child, try child.router.open(inner, flags: flags))
            case .newContainer(_, let inner):
                throw FileSystemError(inner == "/" ? EISDIR : ENOENT)
            case .container:
                throw FileSystemError(EISDIR)
            }
        }
    }

    func create(_ path: String, flags: Int32, mode: mode_t) throws -> MountOpenResult {
        try withPlace(path) { place in
            switch place {
            case .plain(let relative):
                return plain(try folder.create(relative, flags: flags, mode: mode), relative)
            case .child(let child, let inner):
                if inner == "/" { throw FileSystemError(EISDIR) }
                return wrap(child, try child.router.create(inner, flags: flags, mode: mode))
            case .newContainer(let relative, let inner):
                if inner == "/" { throw FileSystemError(EISDIR) }
                return try withMadeContainer(relative) { child in
                    wrap(child, try child.router.create(inner, flags: flags, mode: mode))
                }
            case .container:
                throw FileSystemError(EEXIST)
            }
        }
    }

    /// Puts a container made with mkdir on disk (its first file, or folder, is being made) and
    /// runs `body` with its child.
    func withMadeContainer<T>(_ relative: String, _ body: (BrowseChild) throws -> T) throws -> T {
        if let status = folder.statusIfAny(relative) {
            // Someone made the file meanwhile.
            if status.st_mode & S_IFMT != S_IFREG { throw FileSystemError(EEXIST) }
        } else {
            // With the caller's rights: the kernel checks the folder, and the file is theirs.
            do { _ = try CallerRights.run { try Container.create(at: folder.full(relative), files: []) } } catch {
                throw FileSystemError.from(error)
            }
        }
        lock.withLock { newContainers[relative] = nil }
        guard let child = try children.acquire(relative, status: nil) else { throw FileSystemError(EIO) }
        defer { children.unpin(child) }
        return try body(child)
    }

    public func read(_ id: UInt64, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64,
                     stop: () -> Int32?) throws -> Int {
        switch try handle(id) {
        case .plain(let file):
            let count = pread(file.fd, buffer.baseAddress, buffer.count, off_t(offset))
            if count < 0 { throw FileSystemError(errno) }
            return count
        case .child(let child, let inner):
            return try child.router.read(inner, into: buffer, at: offset, stop: stop)
        }
    }

    public func write(_ id: UInt64, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        switch try handle(id) {
        case .plain(let file):
            // With the writer's rights: a write by another user clears a setuid bit, as on disk.
            return try CallerRights.run { try folder.check(pwrite(file.fd, buffer.baseAddress, buffer.count, off_t(offset))) }
        case .child(let child, let inner):
            return try child.router.write(inner, buffer, at: offset)
        }
    }

    public func release(_ id: UInt64) {
        guard let handle = lock.withLock({ handles.removeValue(forKey: id) }) else { return }
        switch handle {
        case .plain(let file):
            Glibc.close(file.fd)
        case .child(let child, let inner):
            child.router.release(inner)
            children.closed(child)
        }
    }

    public func sync(_ path: String?, handle id: UInt64?) throws {
        if let id, case .plain(let file) = try handle(id) {
            if fsync(file.fd) != 0 { throw FileSystemError(errno) }
            return
        }
        if let id, case .child(let child, _) = try handle(id) { return try child.router.commit() }
        guard let path else { return }
        try withPlace(path) { place in
            if case .child(let child, _) = place { try child.router.commit() }
        }
    }

    public func fileSystemStatistics(_ path: String) throws -> statvfs { try folder.statistics() }

    // MARK: - Mount lifecycle

    public func start(invalidate: @escaping @Sendable (String) -> Void) {
        lock.withLock { invalidator = invalidate }
    }

    public func stop() { lock.withLock { invalidator = nil } }

    /// Saves and closes every open container; what could not be saved, joined in one line.
    public func close(everyFileClosed: Bool) -> String? {
        let failures = children.closeAll(everyFileClosed: everyFileClosed)
        lock.withLock {
            for case .plain(let file) in handles.values { Glibc.close(file.fd) }
            handles = [:]
            for fd in removedWhileOpen.values { Glibc.close(fd) }
            removedWhileOpen = [:]
        }
        return failures.isEmpty ? nil : failures.joined(separator: "; ")
    }
}

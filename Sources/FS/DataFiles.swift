import ASiC
import Foundation
import Signing

/// The data files of one mounted container, as a part of its mount (`MountRouter` hands it
/// every path outside `.asicfs`, without the leading `/`: "" is the root, "a/b.txt" a file).
/// Names with `/` become folders. Safe to call from many threads at once.
///
/// State: `snapshot` is the container on disk; `view` is what the mount shows, which may be
/// ahead of it (files written through `Spool`s, renames, removals, new times). A commit turns the
/// view into a new container, atomically, shortly after the last change (see `CommitScheduler`),
/// on fsync and at unmount (`DataFiles+Commit`). Reads never wait for a commit: they use the
/// snapshot they started with. The first change to a stored data file copies its bytes into a
/// spool outside `lock` (`fillSpool`, `SpoolFill`): no request waits for another file's copy,
/// and each spool's bytes have a lock of their own (`Spool`).
///
/// Whether data files may change now is the container core's rule (`DataFileFreeze`), with the
/// mount's `MountClaim`: while a signing or a signature removal holds it, nothing changes (EBUSY).
///
/// Locks, outermost first: `commitLock` (one save at a time), `lock` (the view), then the leaf
/// locks of a spool, the claim and the error record.
final class DataFiles: MountPart, ClaimableFiles, @unchecked Sendable {
    enum Entry {
        /// A data file of the snapshot, with a new modification time if one was set.
        case stored(DataFile, modified: Date?)
        case spooled(Spool)
    }

    /// The container's path when it was opened (for messages and the kernel's view of it).
    public let containerPath: String
    /// The folder it was opened in, held for as long as it is open, and the container reached
    /// through it: every save, spool and rescue goes there, never by `containerPath` again.
    let pinnedFolder: PinnedFolder
    let openPath: String
    public let readOnly: Bool
    let mountedAt = Date()

    let lock = NSLock()
    let commitLock = NSLock()
    var snapshot: Container
    /// Bumped whenever `snapshot` is replaced (commit, signing, signature removal): caches of
    /// what a snapshot contains (signature list, validation) are keyed by it.
    var generation: UInt64 = 0
    /// What holds the mount now ("a pkcs12 signing is running"), if anything.
    let claim: MountClaim
    /// `status/last-error`, shared with the control folder and the signings.
    let errors: LastError
    var view: [String: Entry] = [:] { didSet { treeIndex = nil } }
    var order = OrderedNames() { didSet { treeIndex = nil } }
    /// Folders made with mkdir that hold no file yet (a container cannot store empty folders).
    var emptyFolders: Set<String> = [] { didSet { treeIndex = nil } }
    /// Listings and folder times; nil when anything in the view changed since it was made.
    var treeIndex: TreeIndex?
    /// Files removed while a program still has them open. libfuse keeps such a file under a
    /// `.fuse_hidden…` name until its last close, and then removes that name: for us that
    /// rename is the removal, and the file lives on here, outside the view: never listed,
    /// never saved, still there for the descriptors that have it open (fstat, read, write).
    var removedWhileOpen: [String: Entry] = [:]
    /// Stored data files being copied into spools outside `lock` (`fillSpool`).
    var fills: [String: SpoolFill] = [:]
    var pendingChanges = false
    /// Bumped by every change to the view: a save knows whether changes came in while it ran.
    var changeCount: UInt64 = 0
    let environment: SignatureEnvironment
    /// The patterns of editor and desktop temporaries (the `transient-names` setting).
    let transient: TransientNames
    /// The files that are never saved: made through this mount under a transient name. Only
    /// these: an entry the container already has, or a data file renamed to such a name, is
    /// the user's data and is saved like any other.
    var temporaries: Set<String> = []
    let containerLock: ContainerLock
    var scheduler: CommitScheduler?
    /// Set by the FUSE adaptor: drops the kernel's cached data and attributes of a path.
    var invalidate: (@Sendable (String) -> Void)?

    /// An open data file: its bytes come from the snapshot or from a spool.
    final class OpenFile {
        enum Source {
            /// A data file of the snapshot (read through this open file's own reader), with the
            /// name it was opened by.
            case stored(EntryReader, name: String)
            case spooled(Spool)
        }
        let source: Source
        let writable: Bool
        /// Opened with direct_io on a spool (see `openSpool`).
        let uncached: Bool
        init(source: Source, writable: Bool, uncached: Bool = false) {
            self.source = source
            self.writable = writable
            self.uncached = uncached
        }
    }

    /// Opens the container (failing with its one-line reason, which `asicfs mount` reports
    /// before it returns, and the mount is taken away) and prepares the private spool folder beside it. `environment` serves signing and validation.
    /// Browse mode opens many containers and only some are written: `lazySpoolFolder` makes the
    /// spool folder when a file is first written, and it cleans stale spools once per folder itself.
    /// `folder`: the container's folder, pinned by the caller (else here, by path); a `lock`
    /// given must have been taken through it (`PinnedFolder.pinned`), so that saves move it.
    /// `claim` and `errors`: the mount's, shared with its control folder and signings.
    init(containerPath: String, readOnly: Bool, environment: SignatureEnvironment, claim: MountClaim, errors: LastError,
         lazySpoolFolder: Bool = false, folder: PinnedFolder? = nil, lock: ContainerLock? = nil) throws {
        self.containerPath = containerPath
        self.claim = claim
        self.errors = errors
        pinnedFolder = try folder ?? PinnedFolder(holding: containerPath)
        openPath = pinnedFolder.pinned(PathText.lastComponent(of: containerPath))
        self.readOnly = readOnly
        self.environment = environment
        transient = TransientNames(configuration: environment.configuration)
        // One user of a container at a time: held while this mount (or browse folder) has it
        // open; a mount takes it before it mounts (`lock`) and its daemon keeps it across the
        // fork until it exits.
        let held = try lock ?? ContainerLock.acquire(openPath, shownAs: containerPath)
        containerLock = held
        do {
            snapshot = try Container.open(openPath)
        } catch {
            // A container that fails to open is not ours to keep locked (browse mode shows it as
            // the file it is, and opens it again once it changes).
            held.release()
            throw error
        }
        if !lazySpoolFolder {
            SpoolFolder.removeStale(in: pinnedFolder.pinnedPath, base: PathText.lastComponent(of: containerPath))
            if !readOnly { _ = try spoolFolder() }
        }
        resetView()
    }

    /// Where spool files go (made when first needed; the caller holds `lock` after init).
    var spools: SpoolFolder?

    private func spoolFolder() throws -> SpoolFolder {
        if let spools { return spools }
        let made = try SpoolFolder.make(forContainer: openPath)
        spools = made
        return made
    }

    func resetView() {
        view = [:]
        temporaries = []
        order = OrderedNames(snapshot.dataFiles.map(\.name))
        for file in snapshot.dataFiles { view[file.name] = .stored(file, modified: nil) }
    }

    // MARK: - State shared with the control folder

    var currentSnapshot: Container { lock.withLock { snapshot } }
    var currentSnapshotAndGeneration: (Container, UInt64) { lock.withLock { (snapshot, generation) } }
    var hasPendingChanges: Bool { lock.withLock { pendingChanges } }
    var dataFileCount: Int { lock.withLock { order.count } }
    /// What holds the mount now ("a pkcs12 signing is running"), if anything.
    var currentActivity: String? { claim.activity }

    /// True when another program changed the container file while nothing here is unsaved and
    /// nothing runs (browse mode then opens it again). Under the lock: a save of ours is
    /// pending until its snapshot is adopted, so our own saves never look like outside changes.
    func changedOnDiskWhileIdle() -> Bool {
        lock.withLock { claim.activity == nil && !pendingChanges && !snapshot.isCurrentOnDisk }
    }

    /// Marks the view as changed since the last save (the caller holds `lock`).
    func noteChange() {
        treeIndex = nil  // sizes and times of spools change without the view changing
        pendingChanges = true
        changeCount &+= 1
    }

    func recordError(_ message: String) { errors.record(message) }

    /// An error whose message goes to `status/last-error`.
    func failure(_ code: Int32, _ message: String) -> FileSystemError { errors.failure(code, message) }

    /// Throws unless data files may change now (`DataFileFreeze`; the caller holds `lock`).
    func checkWritable(_ action: String) throws {
        if let freeze = DataFileFreeze.of(snapshot, readOnlyMount: readOnly, claimedBy: claim.activity) {
            throw failure(freeze.code, freeze.refusing(action))
        }
    }

    // MARK: - What a claim (a signing, a signature removal) asks for

    /// The mount now shows `container` (signed, or with a signature fewer). Nothing else can
    /// have changed meanwhile: the claim kept data files still.
    func adopt(_ container: Container) {
        lock.withLock {
            snapshot = container
            generation &+= 1
            resetView()
        }
    }

    /// A data file still open for writing, if any: a signing cannot start until it is closed.
    var fileOpenForWriting: String? {
        lock.withLock {
            order.first { name in
                if case .spooled(let spool) = view[name] { return spool.writers > 0 }
                return false
            }
        }
    }

    /// The snapshot a signing signs (the caller holds the claim): pending changes are committed
    /// first, so the signature covers exactly what the mount shows. Refused (EBUSY, EIO) when
    /// some change cannot be committed: a file still open for writing, a failed write or save.
    func snapshotForSigning() throws -> Container {
        if hasPendingChanges {
            do { try commit() } catch {
                throw failure(FileSystemError.from(error).code,
                              "cannot sign: saving the changes made in the mount failed first (\(error)); nothing was signed")
            }
        }
        return try lock.withLock {
            for name in order {
                guard case .spooled(let spool) = view[name] else { continue }
                if spool.writers > 0 {
                    throw failure(EBUSY, "cannot sign: '\(name)' is still open for writing; close it first, so that the signature covers its final content")
                }
                if let failed = spool.failed {
                    throw failure(EIO, "cannot sign: writing '\(name)' failed (\(FileSystemError.from(failed))); remove it or write it again first")
                }
            }
            if pendingChanges {
                throw failure(EBUSY, "cannot sign yet: the latest changes are still open in another program; close them and try again")
            }
            return snapshot
        }
    }

    /// The container without the signature file `file`, saved atomically (the caller holds the
    /// claim and adopts it), if the snapshot is still generation `expected` (the one whose listing
    /// named the signature).
    func savingSignatures(removing file: String, ifStill expected: UInt64, action: String) throws -> Container {
        FuseReader.mayWait()  // a save may hold commitLock, and this one rewrites the container
        return try commitLock.withLock {
            let (base, generation) = currentSnapshotAndGeneration
            guard generation == expected else {
                throw failure(EBUSY, "cannot \(action): the signatures changed meanwhile; look again and retry")
            }
            do {
                return try base.savingSignatures(adding: [], removing: [file])
            } catch {
                let reason = shown(FileSystemError.from(error))
                throw failure(reason.code, "cannot \(action): \(reason)")
            }
        }
    }

    // MARK: - Paths

    /// "/a/b.txt" -> "a/b.txt"; "/" -> "".
    static func name(of path: String) -> String {
        String(path.drop(while: { $0 == "/" }))
    }

    /// A folder: the root, one made with mkdir, or one that a data file's name implies.
    func isFolder(_ name: String) -> Bool {
        name.isEmpty || emptyFolders.contains(name) || order.hasFiles(below: name)
    }

    private func attributes(of entry: Entry) -> NodeAttributes {
        let writable = DataFileFreeze.of(snapshot, readOnlyMount: readOnly) == nil
        switch entry {
        case .stored(let file, let modified):
            return NodeAttributes(kind: .file, size: file.size, permissions: writable ? 0o644 : 0o444,
                                  modified: modified ?? file.modified)
        case .spooled(let spool):
            return NodeAttributes(kind: .file, size: spool.size, permissions: 0o644, modified: spool.modified)
        }
    }

    private var folderPermissions: UInt16 {
        DataFileFreeze.of(snapshot, readOnlyMount: readOnly) == nil ? 0o755 : 0o555
    }

    // MARK: - Reading the tree

    func attributes(_ name: String) throws -> NodeAttributes {
        return try lock.withLock {
            if let entry = view[name] ?? removedWhileOpen[name] { return attributes(of: entry) }
            if isFolder(name) { return .directory(folderPermissions, snapshot.dataFiles.isEmpty ? mountedAt : folderTime(name)) }
            throw FileSystemError(ENOENT)
        }
    }

    /// The attributes of an open file that may have no name any more (removed while open:
    /// fstat, and libfuse's getattr with no path).
    func attributes(of file: AnyObject) throws -> NodeAttributes {
        switch try Self.open(file).source {
        case .stored(let reader, _):
            return NodeAttributes(kind: .file, size: reader.size, permissions: 0o444, modified: mountedAt)
        case .spooled(let spool):
            return NodeAttributes(kind: .file, size: spool.size, permissions: 0o644, modified: spool.modified)
        }
    }

    /// A folder shows the newest time of the files in it (the caller holds `lock`).
    private func folderTime(_ name: String) -> Date {
        guard let newest = tree.newest[name], newest.timeIntervalSince1970 != 0 else { return mountedAt }
        return newest
    }

    /// Folder listings and times, made again after any change (the caller holds `lock`).
    private var tree: TreeIndex {
        if let treeIndex { return treeIndex }
        let made = TreeIndex(files: Array(order), emptyFolders: emptyFolders.sorted()) { name in
            view[name].map { attributes(of: $0).modified } ?? mountedAt
        }
        treeIndex = made
        return made
    }

    /// The names directly inside a folder.
    func list(_ name: String) throws -> [String] {
        try lock.withLock {
            guard view[name] == nil, isFolder(name) else {
                throw FileSystemError(view[name] == nil ? ENOENT : ENOTDIR)
            }
            return tree.children[name] ?? []
        }
    }

    // MARK: - Opening, reading, writing

    func open(_ name: String, flags: Int32) throws -> PartOpened {
        let accessMode = flags & O_ACCMODE
        let wantsWrite = accessMode != O_RDONLY || flags & O_TRUNC != 0
        let truncate = flags & O_TRUNC != 0
        for attempt in 0... {
            let opened = try lock.withLock { () -> PartOpened? in
                guard let entry = view[name] else { throw FileSystemError(isFolder(name) ? EISDIR : ENOENT) }
                if !wantsWrite {
                    switch entry {
                    case .stored(let file, _):
                        let reader = try snapshot.content(of: file.name).makeReader()
                        return PartOpened(file: OpenFile(source: .stored(reader, name: name), writable: false), keepCache: true, directIO: false)
                    case .spooled(let spool):
                        return openSpool(spool, writable: false, writeOnly: false)
                    }
                }
                try checkWritable("change '\(name)'")
                if needsFill(entry, keepingBytes: !truncate, attempt: attempt) { return nil }
                let spool = try spoolFor(name, entry: entry, truncate: truncate)
                return openSpool(spool, writable: true, writeOnly: accessMode == O_WRONLY)
            }
            if let opened { return opened }
            try fillSpool(name, action: "change '\(name)'")
        }
        fatalError("unreachable")
    }

    /// Creates a new, empty data file and opens it for writing (`writeOnly`: O_WRONLY, no reads).
    func create(_ name: String, writeOnly: Bool) throws -> PartOpened {
        try lock.withLock {
            try checkWritable("create '\(name)'")
            if let entry = view[name] {
                let spool = try spoolFor(name, entry: entry, truncate: true)
                return openSpool(spool, writable: true, writeOnly: writeOnly)
            }
            try checkNewName(name)
            let spool = try newSpool()
            view[name] = .spooled(spool)
            order.append(name)
            if transient.matches(name) { temporaries.insert(name) }
            removeEmptyFolders(above: name)
            noteChange()
            return openSpool(spool, writable: true, writeOnly: writeOnly)
        }
    }

    /// Opens a handle on a file being written (the caller holds `lock`). A write-only handle
    /// that is the file's only one goes around the page cache (direct_io): the kernel keeps no
    /// copy of bytes that are only written, and sends no GETXATTR security.capability before
    /// the first write (`cp` of a small file in: one round trip less). Any handle opened while
    /// such a writer is open goes around the cache too, so that no reader depends on the kernel
    /// dropping the cached pages an uncached write changed (this one does; the test
    /// `testReadersSeeWhatAWriteOnlyDescriptorWritesAtOnce` checks what readers see).
    private func openSpool(_ spool: Spool, writable: Bool, writeOnly: Bool) -> PartOpened {
        let uncached = spool.uncachedHandles > 0 || (writeOnly && spool.opened == 0)
        spool.opened += 1
        if writable { spool.writers += 1 }
        if uncached { spool.uncachedHandles += 1 }
        return PartOpened(file: OpenFile(source: .spooled(spool), writable: writable, uncached: uncached),
                          keepCache: false, directIO: uncached)
    }

    /// Checks a name for a new data file: allowed by the container rules, parent folder present,
    /// no clash between a file and a folder (the caller holds `lock`).
    func checkNewName(_ name: String) throws {
        do {
            try EntryName.validateDataFileName(name)
        } catch {
            throw failure(EINVAL, "\(error)")
        }
        let parent = PathText.parent(of: name)
        if view[parent] != nil { throw FileSystemError(ENOTDIR) }
        if !isFolder(parent) { throw FileSystemError(ENOENT) }
        if isFolder(name) { throw FileSystemError(EISDIR) }
    }

    func removeEmptyFolders(above name: String) {
        var parent = PathText.parent(of: name)
        while !parent.isEmpty {
            emptyFolders.remove(parent)
            parent = PathText.parent(of: parent)
        }
    }

    private func newSpool() throws -> Spool { Spool(in: try spoolFolder()) }

    /// How often a fill outside the lock is tried before the copy is made under it (a file
    /// that changes under every copy would otherwise never get its spool).
    private static let fillAttempts = 3

    /// Whether a change to `entry` must first copy its stored bytes with `fillSpool` (the
    /// caller holds `lock`).
    private func needsFill(_ entry: Entry, keepingBytes: Bool, attempt: Int) -> Bool {
        guard keepingBytes, attempt < Self.fillAttempts, case .stored = entry else { return false }
        return true
    }

    /// Copies the stored data file `name` into a new spool without holding `lock` (see
    /// `SpoolFill`), and puts the spool into the view if, once the copy is done, the view still
    /// shows that file from the same snapshot and nothing holds the mount; otherwise the copy
    /// is dropped (the caller looks again). A fill of `name` already running is waited for.
    private func fillSpool(_ name: String, action: String) throws {
        enum Step { case copy(SpoolFill), wait(SpoolFill), none }
        let step = try lock.withLock { () -> Step in
            guard case .stored(let file, _)? = view[name] else { return .none }
            try checkWritable(action)
            if let fill = fills[name] { return .wait(fill) }
            let fill = SpoolFill(spool: try newSpool(), base: snapshot, source: file, generation: generation)
            fill.lock.lock()
            fills[name] = fill
            return .copy(fill)
        }
        guard case .copy(let fill) = step else {
            if case .wait(let fill) = step { fill.waitUntilDone() }
            return
        }
        defer { fill.lock.unlock() }
        FuseReader.mayWait()
        var failed: Error?
        do { try fill.copy() } catch { failed = error }
        lock.withLock {
            fills[name] = nil
            guard failed == nil, generation == fill.generation, claim.activity == nil,
                  case .stored(let file, let modified)? = view[name], file == fill.source else { return }
            fill.spool.modified = modified ?? file.modified
            view[name] = .spooled(fill.spool)
            noteChange()
        }
        if let failed { throw failure(FileSystemError.from(failed).code, "cannot change '\(name)': \(failed)") }
    }

    /// The spool holding `name`'s bytes, made from the container's copy if needed (the caller holds `lock`).
    private func spoolFor(_ name: String, entry: Entry, truncate: Bool) throws -> Spool {
        switch entry {
        case .spooled(let spool):
            if truncate {
                try spool.truncate(to: 0)
                spool.clearFailure()
                noteChange()
            }
            return spool
        case .stored(let file, let modified):
            let spool = try newSpool()
            if !truncate {
                var offset: Int64 = 0
                do {
                    try snapshot.read(file.name) { chunk in
                        try spool.write(chunk, at: offset)
                        offset += Int64(chunk.count)
                    }
                } catch {
                    throw failure(FileSystemError.from(error).code, "cannot change '\(name)': \(error)")
                }
                spool.modified = modified ?? file.modified
            }
            view[name] = .spooled(spool)
            noteChange()
            return spool
        }
    }

    /// One of our open files (the router hands back what `open` and `create` made).
    private static func open(_ file: AnyObject) throws -> OpenFile {
        guard let file = file as? OpenFile else { throw FileSystemError(EBADF) }
        return file
    }

    /// Reads from an open data file (never waits: `stop` is for parts whose reads may block).
    func read(_ file: AnyObject, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64,
              stop: () -> Int32?) throws -> Int {
        switch try Self.open(file).source {
        case .stored(let reader, let name):
            do {
                return try reader.read(into: buffer, at: offset)
            } catch let error as ContainerError {
                // Damaged data: what the kernel cached of it earlier must not be served either.
                // (Not from this thread: the kernel holds the page this read fills, and
                // invalidating it from inside the read would wait for that page forever.)
                if case .dataMismatch = error, let invalidate {
                    DispatchQueue.global().async { invalidate("/" + name) }
                    recordError("reading '\(name)' failed: \(error)")
                }
                throw error
            }
        // The spool's own lock: a read never waits for the view or another file.
        case .spooled(let spool): return try spool.read(into: buffer, at: offset)
        }
    }

    func write(_ file: AnyObject, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        let handle = try Self.open(file)
        guard handle.writable, case .spooled(let spool) = handle.source else { throw FileSystemError(EBADF) }
        do {
            try spool.write(buffer, at: offset)
        } catch {
            let reason = FileSystemError.from(error)
            throw failure(reason.code, "writing a file failed (\(reason)); it will not be added to the container")
        }
        lock.withLock { if !spool.removed { noteChange() } }
        return buffer.count
    }

    /// Truncates by path, or through an open handle (`path` nil: ftruncate of a file that was
    /// removed while open, whose bytes are no longer in the view).
    func truncate(_ name: String?, to length: Int64, file: AnyObject?) throws {
        let handle = try file.map(Self.open)
        guard let name else {
            guard case .spooled(let spool)? = handle?.source else { throw FileSystemError(EBADF) }
            try spool.truncate(to: length)
            return
        }
        for attempt in 0... {
            let done = try lock.withLock { () -> Bool in
                let spool: Spool
                if let handle, case .spooled(let open) = handle.source, handle.writable {
                    spool = open
                } else {
                    guard let entry = view[name] else { throw FileSystemError(isFolder(name) ? EISDIR : ENOENT) }
                    try checkWritable("change '\(name)'")
                    if needsFill(entry, keepingBytes: length != 0, attempt: attempt) { return false }
                    spool = try spoolFor(name, entry: entry, truncate: length == 0)
                }
                try spool.truncate(to: length)
                if !spool.removed { noteChange() }
                return true
            }
            if done { break }
            try fillSpool(name, action: "change '\(name)'")
        }
        scheduler?.changed()
    }

    /// The last close of a handle: a finished write becomes eligible for the next commit.
    func release(_ file: AnyObject) {
        guard let handle = file as? OpenFile else { return }
        let wrote = lock.withLock { () -> Bool in
            if case .stored(let reader, _) = handle.source { reader.close() }
            guard case .spooled(let spool) = handle.source else { return false }
            spool.opened -= 1
            if handle.writable { spool.writers -= 1 }
            if handle.uncached { spool.uncachedHandles -= 1 }
            return handle.writable
        }
        if wrote { scheduler?.changed() }
    }
}

import ASiC
import Foundation
import Signing

/// One mounted container, as a tree of paths: the data files (names with `/` become folders)
/// and the `.asicfs` control folder. Everything the FUSE adaptor calls is here, in Swift terms,
/// with errors as `FileSystemError`; it is safe to call from many threads at once.
///
/// State: `snapshot` is the container on disk; `view` is what the mount shows, which may be
/// ahead of it (files written through `Spool`s, renames, removals, new times). A commit turns the
/// view into a new container, atomically, shortly after the last change (see `CommitScheduler`),
/// on fsync and at unmount. Reads never wait for a commit: they use the snapshot they started with.
/// The first change to a stored data file copies its bytes into a spool outside `lock`
/// (`fillSpool`, `SpoolFill`): no request waits for another file's copy.
///
/// Signing and removing a signature replace the snapshot too. While one of them runs it holds
/// the mount (`claim`): data files cannot change (EBUSY) until it `release`s it.
public final class ContainerFileSystem: @unchecked Sendable {
    enum Entry {
        /// A data file of the snapshot, with a new modification time if one was set.
        case stored(DataFile, modified: Date?)
        case spooled(Spool)
    }

    /// The container's path when it was opened (for messages and the kernel's view of it).
    public let containerPath: String
    /// The folder it was opened in, held for as long as it is open, and the container reached
    /// through it: every save, spool and rescue goes there, never by `containerPath` again.
    private let pinnedFolder: PinnedFolder
    private let openPath: String
    public let readOnly: Bool
    let mountedAt = Date()

    private let lock = NSLock()
    private let commitLock = NSLock()
    /// Guards `handles` and `nextHandle` only; taken inside `lock` where both are needed, never the other way.
    private let handleLock = NSLock()
    private var snapshot: Container
    /// Bumped whenever `snapshot` is replaced (commit, signing, signature removal): caches of
    /// what a snapshot contains (signature list, validation) are keyed by it.
    private var generation: UInt64 = 0
    /// What holds the mount now ("a pkcs12 signing is running"), if anything.
    private var activity: String?
    private var view: [String: Entry] = [:] { didSet { treeIndex = nil } }
    private var order = OrderedNames() { didSet { treeIndex = nil } }
    /// Folders made with mkdir that hold no file yet (a container cannot store empty folders).
    private var emptyFolders: Set<String> = [] { didSet { treeIndex = nil } }
    /// Listings and folder times; nil when anything in the view changed since it was made.
    private var treeIndex: TreeIndex?
    /// Files removed while a program still has them open. libfuse keeps such a file under a
    /// `.fuse_hidden…` name until its last close, and then removes that name: for us that
    /// rename is the removal, and the file lives on here, outside the view: never listed,
    /// never saved, still there for the descriptors that have it open (fstat, read, write).
    private var removedWhileOpen: [String: Entry] = [:]
    private var handles: [UInt64: Handle] = [:]
    private var nextHandle: UInt64 = 1
    /// Stored data files being copied into spools outside `lock` (`fillSpool`).
    private var fills: [String: SpoolFill] = [:]
    private var pendingChanges = false
    /// Bumped by every change to the view: a save knows whether changes came in while it ran.
    private var changeCount: UInt64 = 0
    private(set) var lastError = ""
    let environment: SignatureEnvironment
    /// The patterns of editor and desktop temporaries (the `transient-names` setting).
    let transient: TransientNames
    /// The files that are never saved: made through this mount under a transient name. Only
    /// these: an entry the container already has, or a data file renamed to such a name, is
    /// the user's data and is saved like any other.
    private var temporaries: Set<String> = []
    private let containerLock: ContainerLock
    lazy var control = ControlFolder(fileSystem: self, environment: environment)
    lazy var signing = SigningCoordinator(fileSystem: self, environment: environment)
    var scheduler: CommitScheduler?
    /// Set by the FUSE adaptor: drops the kernel's cached data and attributes of a path.
    var invalidate: (@Sendable (String) -> Void)?

    /// An open file: its bytes come from the snapshot, a spool, or the control folder.
    final class Handle {
        enum Source {
            /// A data file of the snapshot (read through this open file's own reader), with the
            /// name it was opened by.
            case stored(EntryReader, name: String)
            case spooled(Spool)
            case control(ControlFile, [UInt8])
            /// `sign/<method>` opened for writing: the request written, taken at its close.
            case signRequest(SignRequest)
            /// `signatures/<n>-<NAME>/remove` opened for writing, in the listing of `generation`;
            /// reading shows `usage`.
            case removeRequest(folder: String, generation: UInt64, usage: [UInt8])
            case wait(BlockingRead)
            /// `status/<method>`, whose first read may wait for the verification code.
            case methodStatus(SigningMethod, BlockingRead)
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

    /// What one reader of a control file whose first read may block (`status/wait`,
    /// `status/<method>`) got: the text, captured by that read, and whether it reports a failure
    /// (then the read after the text fails with EIO).
    final class BlockingRead: @unchecked Sendable {
        private let lock = NSLock()
        private var captured: (bytes: [UInt8], failed: Bool)?

        func result(_ produce: () throws -> (bytes: [UInt8], failed: Bool)) rethrows -> (bytes: [UInt8], failed: Bool) {
            if let done = lock.withLock({ captured }) { return done }
            let made = try produce()
            return lock.withLock {
                if captured == nil { captured = made }
                return captured!
            }
        }
    }

    /// Opens the container (failing with its one-line reason, which `asicfs mount` reports
    /// before it returns, and the mount is taken away) and prepares the private spool folder beside it. `environment` serves signing and validation.
    /// Browse mode opens many containers and only some are written: `lazySpoolFolder` makes the
    /// spool folder when a file is first written, and it cleans stale spools once per folder itself.
    /// `folder`: the container's folder, pinned by the caller (else here, by path); a `lock`
    /// given must have been taken through it (`PinnedFolder.pinned`), so that saves move it.
    public init(containerPath: String, readOnly: Bool, environment: SignatureEnvironment,
                lazySpoolFolder: Bool = false, folder: PinnedFolder? = nil, lock: ContainerLock? = nil) throws {
        self.containerPath = containerPath
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
        // Made now, before any FUSE thread can race to make them.
        _ = control
        _ = signing
    }

    /// Where spool files go (made when first needed; the caller holds `lock` after init).
    private var spools: SpoolFolder?

    private func spoolFolder() throws -> SpoolFolder {
        if let spools { return spools }
        let made = try SpoolFolder.make(forContainer: openPath)
        spools = made
        return made
    }

    /// The spool folders the daemon `pid` left beside `containerPath` (a killed daemon's).
    public static func spoolFoldersLeft(forContainer containerPath: String, daemon pid: Int32) -> [String] {
        SpoolFolder.leftBehind(forContainer: containerPath, daemon: pid)
    }

    private func resetView() {
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
    var currentActivity: String? { lock.withLock { activity } }

    /// True when another program changed the container file while nothing here is unsaved and
    /// nothing runs (browse mode then opens it again). Under the lock: a save of ours is
    /// pending until its snapshot is adopted, so our own saves never look like outside changes.
    func changedOnDiskWhileIdle() -> Bool {
        lock.withLock { activity == nil && !pendingChanges && !snapshot.isCurrentOnDisk }
    }

    /// Marks the view as changed since the last save (the caller holds `lock`).
    private func noteChange() {
        treeIndex = nil  // sizes and times of spools change without the view changing
        pendingChanges = true
        changeCount &+= 1
    }

    func recordError(_ message: String) {
        lock.withLock { lastError = message }
    }

    /// What `status/last-error` and the signing status say, kept by a browse mount while it has
    /// the container closed (see `BrowseChildren`).
    struct Memory {
        let lastError: String
        let signing: SigningCoordinator.Memory
        var isEmpty: Bool { lastError.isEmpty && signing.isEmpty }
    }

    var memory: Memory { Memory(lastError: lock.withLock { lastError }, signing: signing.memory) }

    func restore(_ memory: Memory) {
        lock.withLock { lastError = memory.lastError }
        signing.restore(memory.signing)
    }

    /// An error whose message goes to `status/last-error` (the caller does not hold `lock`).
    func failure(_ code: Int32, _ message: String) -> FileSystemError {
        recordError(message)
        return FileSystemError(code, message)
    }

    private func fail(_ code: Int32, _ message: String) -> FileSystemError {
        lastError = message
        return FileSystemError(code, message)
    }

    /// Throws unless data files may change now (the caller holds `lock`).
    private func checkWritable(_ action: String) throws {
        if readOnly {
            throw fail(EROFS, "cannot \(action): the container is mounted read-only (-o ro)")
        }
        if let activity {
            throw fail(EBUSY, "cannot \(action): \(activity); data files cannot change until it ends (see .asicfs/status/current)")
        }
        if snapshot.kind == .asicS {
            throw fail(EPERM, "cannot \(action): this is an ASiC-S container, whose single data file is time-stamped")
        }
        if snapshot.isSigned {
            let count = snapshot.signatureFiles.count
            throw fail(EPERM, "cannot \(action): the container is signed (\(count) signature file\(count == 1 ? "" : "s")) and changing its data files would break the signatures; copy the files into a new container to change them")
        }
    }

    // MARK: - Signing and removing signatures

    /// Holds the mount for `activity` (a signing, a signature removal): until `release`, data
    /// files cannot change and no other activity can start (EBUSY).
    func claim(_ activity: String, for action: String) throws {
        try lock.withLock {
            try checkClaimable(action)
            self.activity = activity
        }
    }

    /// Throws what `claim` would (the caller holds `lock`).
    private func checkClaimable(_ action: String) throws {
        if readOnly { throw fail(EROFS, "cannot \(action): the container is mounted read-only (-o ro)") }
        if let activity { throw fail(EBUSY, "cannot \(action): \(activity)") }
    }

    /// Ends the activity; with a container, the mount now shows that snapshot (signed, or with a
    /// signature fewer). Nothing else can have changed meanwhile: the claim kept data files still.
    func release(adopting container: Container?) {
        lock.withLock {
            if let container {
                snapshot = container
                generation &+= 1
                resetView()
            }
            activity = nil
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
                    throw fail(EBUSY, "cannot sign: '\(name)' is still open for writing; close it first, so that the signature covers its final content")
                }
                if let failed = spool.failed {
                    throw fail(EIO, "cannot sign: writing '\(name)' failed (\(FileSystemError.from(failed))); remove it or write it again first")
                }
            }
            if pendingChanges {
                throw fail(EBUSY, "cannot sign yet: the latest changes are still open in another program; close them and try again")
            }
            return snapshot
        }
    }

    /// Removes one signature file from the container, atomically (`remove` written to its folder's file), if the
    /// snapshot is still generation `expected` (the one whose listing named the folder).
    func removeSignatureFile(_ file: String, describedAs what: String, ifStill expected: UInt64) throws {
        let action = "remove \(what)"
        try signing.beginRemoval(action)
        var adopted: Container?
        defer { release(adopting: adopted) }
        FuseReader.mayWait()  // a save may hold commitLock, and this one rewrites the container
        try commitLock.withLock {
            let (base, generation) = currentSnapshotAndGeneration
            guard generation == expected else {
                throw failure(EBUSY, "cannot \(action): the signatures changed meanwhile; look again and retry")
            }
            do {
                adopted = try base.savingSignatures(adding: [], removing: [file])
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
    private func isFolder(_ name: String) -> Bool {
        name.isEmpty || emptyFolders.contains(name) || order.hasFiles(below: name)
    }

    private func attributes(of entry: Entry) -> NodeAttributes {
        let writable = !readOnly && !snapshot.isSigned && snapshot.kind == .asicE
        switch entry {
        case .stored(let file, let modified):
            return NodeAttributes(kind: .file, size: file.size, permissions: writable ? 0o644 : 0o444,
                                  modified: modified ?? file.modified)
        case .spooled(let spool):
            return NodeAttributes(kind: .file, size: spool.size, permissions: 0o644, modified: spool.modified)
        }
    }

    private var folderPermissions: UInt16 {
        !readOnly && !snapshot.isSigned && snapshot.kind == .asicE ? 0o755 : 0o555
    }

    // MARK: - Reading the tree

    public func attributes(_ path: String) throws -> NodeAttributes {
        let name = Self.name(of: path)
        if ControlFolder.contains(name) { return try control.attributes(name) }
        return try lock.withLock {
            if let entry = view[name] ?? removedWhileOpen[name] { return attributes(of: entry) }
            if isFolder(name) { return .directory(folderPermissions, snapshot.dataFiles.isEmpty ? mountedAt : folderTime(name)) }
            throw FileSystemError(ENOENT)
        }
    }

    /// The attributes of an open file that may have no name any more (removed while open:
    /// fstat, and libfuse's getattr with no path).
    public func attributes(handle id: UInt64) throws -> NodeAttributes {
        switch try handle(id).source {
        case .stored(let reader, _):
            return NodeAttributes(kind: .file, size: reader.size, permissions: 0o444, modified: mountedAt)
        case .spooled(let spool):
            return lock.withLock { NodeAttributes(kind: .file, size: spool.size, permissions: 0o644, modified: spool.modified) }
        case .control(_, let bytes):
            return NodeAttributes(kind: .file, size: Int64(bytes.count), permissions: 0o444, modified: mountedAt)
        case .signRequest, .removeRequest, .wait, .methodStatus:
            return NodeAttributes(kind: .file, size: 0, permissions: 0o444, modified: mountedAt)
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
    public func list(_ path: String) throws -> [String] {
        let name = Self.name(of: path)
        if ControlFolder.contains(name) { return try control.list(name) }
        return try lock.withLock {
            guard view[name] == nil, isFolder(name) else {
                throw FileSystemError(view[name] == nil ? ENOENT : ENOTDIR)
            }
            let children = tree.children[name] ?? []
            return name.isEmpty ? [ControlFolder.name] + children : children
        }
    }

    /// The names directly inside a folder with their attributes (for READDIRPLUS).
    public func listWithAttributes(_ path: String) throws -> [(String, NodeAttributes)] {
        let names = try list(path)
        let prefix = path.hasSuffix("/") ? path : path + "/"
        return names.compactMap { name in (try? attributes(prefix + name)).map { (name, $0) } }
    }

    // MARK: - Opening, reading, writing

    public struct OpenResult {
        public let handle: UInt64
        /// The content cannot change behind the kernel's back: it may keep its page cache.
        public let keepCache: Bool
        /// Generated content: bypass the page cache entirely.
        public let directIO: Bool
    }

    public func open(_ path: String, flags: Int32) throws -> OpenResult {
        let name = Self.name(of: path)
        let accessMode = flags & O_ACCMODE
        let wantsWrite = accessMode != O_RDONLY || flags & O_TRUNC != 0
        if ControlFolder.contains(name) {
            let file = try control.file(name)
            let source: Handle.Source
            switch file {
            case .sign(let method) where wantsWrite:
                if readOnly { throw FileSystemError(EROFS) }
                return register(Handle(source: .signRequest(SignRequest(method: method)), writable: true), keepCache: false,
                                directIO: true)
            case .signature(_, .remove) where wantsWrite:
                if readOnly { throw FileSystemError(EROFS) }
                let (folder, generation) = control.signatureFolder(of: name)
                let request = Handle.Source.removeRequest(folder: folder, generation: generation, usage: control.content(file))
                return register(Handle(source: request, writable: true), keepCache: false, directIO: true)
            case _ where wantsWrite: throw FileSystemError(EACCES)
            case .wait: source = .wait(BlockingRead())
            // O_NONBLOCK: the text as it is now, without waiting for a verification code.
            case .methodStatus(let method) where flags & O_NONBLOCK == 0: source = .methodStatus(method, BlockingRead())
            default: source = .control(file, control.content(file))
            }
            return register(Handle(source: source, writable: false), keepCache: false, directIO: true)
        }
        let truncate = flags & O_TRUNC != 0
        for attempt in 0... {
            let opened = try lock.withLock { () -> OpenResult? in
                guard let entry = view[name] else { throw FileSystemError(isFolder(name) ? EISDIR : ENOENT) }
                if !wantsWrite {
                    switch entry {
                    case .stored(let file, _):
                        let reader = try snapshot.content(of: file.name).makeReader()
                        return register(Handle(source: .stored(reader, name: name), writable: false), keepCache: true, directIO: false)
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
    public func create(_ path: String, writeOnly: Bool = false) throws -> OpenResult {
        let name = Self.name(of: path)
        if ControlFolder.contains(name) { throw FileSystemError(EACCES) }
        return try lock.withLock {
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
    private func openSpool(_ spool: Spool, writable: Bool, writeOnly: Bool) -> OpenResult {
        let uncached = spool.uncachedHandles > 0 || (writeOnly && spool.opened == 0)
        spool.opened += 1
        if writable { spool.writers += 1 }
        if uncached { spool.uncachedHandles += 1 }
        return register(Handle(source: .spooled(spool), writable: writable, uncached: uncached),
                        keepCache: false, directIO: uncached)
    }

    /// Checks a name for a new data file: allowed by the container rules, parent folder present,
    /// no clash between a file and a folder (the caller holds `lock`).
    private func checkNewName(_ name: String) throws {
        do {
            try EntryName.validateDataFileName(name)
        } catch {
            throw fail(EINVAL, "\(error)")
        }
        let parent = PathText.parent(of: name)
        if view[parent] != nil { throw FileSystemError(ENOTDIR) }
        if !isFolder(parent) { throw FileSystemError(ENOENT) }
        if isFolder(name) { throw FileSystemError(EISDIR) }
    }

    private func removeEmptyFolders(above name: String) {
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
            guard failed == nil, generation == fill.generation, activity == nil,
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
                spool.failed = nil
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
                    throw fail(FileSystemError.from(error).code, "cannot change '\(name)': \(error)")
                }
                spool.modified = modified ?? file.modified
            }
            view[name] = .spooled(spool)
            noteChange()
            return spool
        }
    }

    private func register(_ handle: Handle, keepCache: Bool, directIO: Bool) -> OpenResult {
        let id = handleLock.withLock { () -> UInt64 in
            let id = nextHandle
            nextHandle += 1
            handles[id] = handle
            return id
        }
        return OpenResult(handle: id, keepCache: keepCache, directIO: directIO)
    }

    private func handle(_ id: UInt64) throws -> Handle {
        guard let handle = handleLock.withLock({ handles[id] }) else { throw FileSystemError(EBADF) }
        return handle
    }

    /// Reads from an open file. `stop` is asked while a read blocks (`status/wait`,
    /// `status/<method>`): an errno from it ends the wait (the reader was interrupted, or the
    /// mount is going away).
    public func read(_ id: UInt64, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64,
                     stop: () -> Int32? = { nil }) throws -> Int {
        switch try handle(id).source {
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
        case .spooled(let spool): return try lock.withLock { try spool.read(into: buffer, at: offset) }
        case .control(_, let bytes): return Self.copy(bytes, into: buffer, at: offset)
        case .signRequest(let request): return Self.copy(Array(request.method.usage.utf8), into: buffer, at: offset)
        case .removeRequest(_, _, let usage): return Self.copy(usage, into: buffer, at: offset)
        case .wait(let state):
            let (bytes, failed) = try state.result {
                let outcome = try signing.waitForOutcome(stop: stop)
                let line = outcome?.line ?? "idle: no signing has run"
                if case .failed? = outcome { return (Array((line + "\n").utf8), true) }
                return (Array((line + "\n").utf8), false)
            }
            // After a failure's line, an error: `cat` prints the line and exits non-zero.
            if offset >= bytes.count && failed { throw FileSystemError(EIO) }
            return Self.copy(bytes, into: buffer, at: offset)
        case .methodStatus(let method, let state):
            let (bytes, _) = try state.result { (Array(try signing.waitForStatus(of: method, stop: stop).utf8), false) }
            return Self.copy(bytes, into: buffer, at: offset)
        }
    }

    private static func copy(_ bytes: [UInt8], into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
        guard offset < bytes.count else { return 0 }
        let count = min(buffer.count, bytes.count - Int(offset))
        bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + count])) }
        return count
    }

    public func write(_ id: UInt64, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        let handle = try handle(id)
        if case .signRequest(let request) = handle.source {
            try signing.write(request, buffer, at: offset)
            return buffer.count
        }
        if case .removeRequest(let folder, let generation, _) = handle.source {
            try control.removeSignature(buffer, folder: folder, ifStill: generation)
            return buffer.count
        }
        guard handle.writable, case .spooled(let spool) = handle.source else { throw FileSystemError(EBADF) }
        try lock.withLock {
            do {
                try spool.write(buffer, at: offset)
            } catch {
                let reason = FileSystemError.from(error)
                throw fail(reason.code, "writing a file failed (\(reason)); it will not be added to the container")
            }
            if !spool.removed { noteChange() }
        }
        return buffer.count
    }

    /// Truncates by path, or through an open handle (`path` nil: ftruncate of a file that was
    /// removed while open, whose bytes are no longer in the view).
    public func truncate(_ path: String?, to length: Int64, handle id: UInt64?) throws {
        guard let path else {
            guard let id, case .spooled(let spool) = try handle(id).source else { throw FileSystemError(EBADF) }
            try lock.withLock { try spool.truncate(to: length) }
            return
        }
        let name = Self.name(of: path)
        if ControlFolder.contains(name) {
            // `echo … > sign/<method>` truncates first; a request file holds nothing to cut.
            if try control.file(name).isRequest { return }
            throw FileSystemError(EACCES)
        }
        for attempt in 0... {
            let done = try lock.withLock { () -> Bool in
                let spool: Spool
                if let id, let handle = handleLock.withLock({ handles[id] }), case .spooled(let open) = handle.source,
                   handle.writable {
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
    public func release(_ id: UInt64) {
        var closedRequest: SignRequest?
        let wrote = lock.withLock { () -> Bool in
            guard let handle = handleLock.withLock({ handles.removeValue(forKey: id) }) else { return false }
            if case .stored(let reader, _) = handle.source { reader.close() }
            if case .signRequest(let request) = handle.source { closedRequest = request }
            guard case .spooled(let spool) = handle.source else { return false }
            spool.opened -= 1
            if handle.writable { spool.writers -= 1 }
            if handle.uncached { spool.uncachedHandles -= 1 }
            return handle.writable
        }
        if wrote { scheduler?.changed() }
        // Outside the lock: starting a signing commits pending changes.
        if let closedRequest { signing.take(closedRequest) }
    }

    // MARK: - Changing the tree

    public func unlink(_ path: String) throws {
        let name = Self.name(of: path)
        if ControlFolder.contains(name) { try control.refuseRemoval(name) }
        try lock.withLock {
            // The last close of a file removed while open (see `removedWhileOpen`).
            if removedWhileOpen.removeValue(forKey: name) != nil { return }
            guard view[name] != nil else { throw FileSystemError(isFolder(name) ? EISDIR : ENOENT) }
            try checkWritable("remove '\(name)'")
            removeFromView(name)
        }
        scheduler?.changed()
    }

    /// Removes a data file from the view (the caller holds `lock` and has checked it may).
    @discardableResult
    private func removeFromView(_ name: String) -> Entry? {
        guard let entry = view.removeValue(forKey: name) else { return nil }
        if case .spooled(let spool) = entry { spool.removed = true }
        order.remove(name)
        temporaries.remove(name)
        keepParentFolder(of: name)
        noteChange()
        return entry
    }

    /// libfuse's name for a file removed while open.
    static func isRemovedWhileOpenName(_ name: String) -> Bool {
        PathText.lastComponent(of: name).hasPrefix(".fuse_hidden")
    }

    /// `rm` of an open file, as libfuse sends it: a rename to `.fuse_hidden…`.
    private func removeWhileOpen(_ from: String, keepingAs hiddenName: String) throws {
        if ControlFolder.contains(from) { try control.refuseRemoval(from) }
        try lock.withLock {
            guard view[from] != nil else { throw FileSystemError(isFolder(from) ? EISDIR : ENOENT) }
            try checkWritable("remove '\(from)'")
            removedWhileOpen[hiddenName] = removeFromView(from)
        }
        scheduler?.changed()
    }

    /// Removing the last file of a folder leaves the folder, as on any filesystem.
    private func keepParentFolder(of name: String) {
        let parent = PathText.parent(of: name)
        if !parent.isEmpty && !isFolder(parent) { emptyFolders.insert(parent) }
    }

    public func makeFolder(_ path: String) throws {
        let name = Self.name(of: path)
        if ControlFolder.contains(name) { throw FileSystemError(EPERM) }
        // No trash inside a container: file managers then offer to delete permanently, as they
        // do on read-only media, instead of putting the file into the container under .Trash.
        if TransientNames.isTrashFolder(name) {
            throw fail(EPERM, "cannot create '\(name)': a container keeps no trash folder (delete permanently instead)")
        }
        try lock.withLock {
            if view[name] != nil || isFolder(name) { throw FileSystemError(EEXIST) }
            try checkWritable("create the folder '\(name)'")
            try checkNewName(name)
            emptyFolders.insert(name)
        }
    }

    public func removeFolder(_ path: String) throws {
        let name = Self.name(of: path)
        if ControlFolder.contains(name) { try control.refuseRemoval(name) }
        try lock.withLock {
            if view[name] != nil { throw FileSystemError(ENOTDIR) }
            guard isFolder(name), !name.isEmpty else { throw FileSystemError(name.isEmpty ? EBUSY : ENOENT) }
            if order.hasFiles(below: name) || emptyFolders.contains(where: { $0.hasPrefix(name + "/") }) {
                throw FileSystemError(ENOTEMPTY)
            }
            try checkWritable("remove the folder '\(name)'")
            emptyFolders.remove(name)
            keepParentFolder(of: name)
        }
    }

    public static let renameNoReplace: UInt32 = 1
    public static let renameExchange: UInt32 = 2

    /// Renames a file or a whole folder. Renaming over an existing file replaces it, as rename(2) does.
    public func rename(_ fromPath: String, to toPath: String, flags: UInt32) throws {
        let from = Self.name(of: fromPath), to = Self.name(of: toPath)
        if Self.isRemovedWhileOpenName(to), flags == 0 { return try removeWhileOpen(from, keepingAs: to) }
        if ControlFolder.contains(from) || ControlFolder.contains(to) { throw FileSystemError(EXDEV) }
        if flags & Self.renameExchange != 0 { throw FileSystemError(EINVAL) }
        try lock.withLock {
            let fromIsFile = view[from] != nil
            guard fromIsFile || (isFolder(from) && !from.isEmpty) else { throw FileSystemError(ENOENT) }
            if from == to { return }
            try checkWritable("rename '\(from)'")
            if to.hasPrefix(from + "/") { throw FileSystemError(EINVAL) }
            let targetIsFile = view[to] != nil, targetIsFolder = !targetIsFile && isFolder(to)
            if (targetIsFile || targetIsFolder) && flags & Self.renameNoReplace != 0 { throw FileSystemError(EEXIST) }
            if fromIsFile {
                if targetIsFolder { throw FileSystemError(EISDIR) }
                if !targetIsFile { try checkNewName(to) }
                if targetIsFile { order.remove(to) }
                // A temporary stays one under another transient name and becomes a data file
                // under a normal one (an editor saving through it); a data file stays data.
                temporaries.remove(to)
                if temporaries.remove(from) != nil, transient.matches(to) { temporaries.insert(to) }
                view[to] = view.removeValue(forKey: from)
                order.rename(from, to: to)
            } else {
                if targetIsFile { throw FileSystemError(ENOTDIR) }
                if targetIsFolder {
                    if order.hasFiles(below: to) { throw FileSystemError(ENOTEMPTY) }
                    emptyFolders.remove(to)
                } else {
                    try checkNewName(to)
                }
                let prefix = from + "/"
                // Every new name is checked before anything moves, so a refusal changes nothing.
                let moves = order.filter { $0.hasPrefix(prefix) }.map { ($0, to + "/" + $0.dropFirst(prefix.count)) }
                for (_, new) in moves {
                    do { try EntryName.validateDataFileName(new) } catch { throw fail(EINVAL, "\(error)") }
                }
                for (old, new) in moves {
                    view[new] = view.removeValue(forKey: old)
                    order.rename(old, to: new)
                    if temporaries.remove(old) != nil { temporaries.insert(new) }
                }
                emptyFolders = Set(emptyFolders.map { $0 == from ? to : $0.hasPrefix(prefix) ? to + "/" + $0.dropFirst(prefix.count) : $0 })
            }
            keepParentFolder(of: from)
            removeEmptyFolders(above: to)
            noteChange()
        }
        invalidate?(toPath)
        scheduler?.changed()
    }

    /// Sets a data file's modification time (`touch`); folders accept and ignore it.
    public func setModified(_ path: String, to date: Date?) throws {
        let name = Self.name(of: path)
        if ControlFolder.contains(name) { return }
        try lock.withLock {
            guard let entry = view[name] else {
                if isFolder(name) || removedWhileOpen[name] != nil { return }
                throw FileSystemError(ENOENT)
            }
            try checkWritable("change the time of '\(name)'")
            let when = date ?? Date()
            switch entry {
            case .stored(let file, _): view[name] = .stored(file, modified: when)
            case .spooled(let spool): spool.modified = when; spool.generation += 1
            }
            noteChange()
        }
        scheduler?.changed()
    }

    // MARK: - Committing

    /// Writes the view into the container now (fsync, unmount, and the scheduler call this).
    /// Files still open for writing keep their old (or no) content in this commit.
    public func commit() throws {
        FuseReader.mayWait()
        commitLock.lock(); defer { commitLock.unlock() }
        // Nothing to save (an unmount of a mount nobody changed): no plan over every file.
        guard lock.withLock({ pendingChanges }) else { return }
        // What this save writes: the layout, and for each part of it where its bytes came from
        // (a snapshot entry by its name there, or a spool at a generation), so that afterwards
        // the view can point at the saved entries even if names changed meanwhile.
        struct Captured { let name: String; let generation: UInt64 }
        struct Plan {
            var layout: [PlannedDataFile] = []
            var spools: [ObjectIdentifier: Captured] = [:]
            /// Name in the snapshot -> (name in the layout, modification time asked for).
            var kept: [String: (name: String, modified: Date?)] = [:]
            var changes: UInt64 = 0
            /// A file still open for writing (or broken) was left out: it is saved later.
            var unfinished = false
        }
        let (base, plan, changed) = lock.withLock { () -> (Container, Plan, Bool) in
            var plan = Plan()
            for name in order where !temporaries.contains(name) {
                switch view[name]! {
                case .stored(let file, let modified):
                    plan.layout.append(PlannedDataFile(name: name, source: .existing(file), modified: modified))
                    plan.kept[file.name] = (name, modified)
                case .spooled(let spool):
                    if spool.writers > 0 || spool.failed != nil {
                        plan.unfinished = plan.unfinished || spool.failed == nil
                        // Not finished (or broken): keep what the container had under this name, if anything.
                        if let old = snapshot.dataFile(named: name) { plan.layout.append(PlannedDataFile(name: name, source: .existing(old))) }
                        continue
                    }
                    var source = spool.source
                    source.name = name
                    source.mediaType = MediaType.guess(forName: name)
                    source.modified = spool.modified
                    plan.layout.append(PlannedDataFile(name: name, source: .file(source)))
                    plan.spools[ObjectIdentifier(spool)] = Captured(name: name, generation: spool.generation)
                }
            }
            plan.changes = changeCount
            return (snapshot, plan, pendingChanges)
        }
        guard changed else { return }
        // Only editor temporaries changed: the container is left as it is, not rewritten. (A
        // file still being written is no reason to save now, but one to save once it is closed.)
        let unchanged = !plan.unfinished && plan.spools.isEmpty && plan.layout.map(\.name) == base.dataFiles.map(\.name)
            && plan.layout.allSatisfy { planned in
                if case .existing(let file) = planned.source { return file.name == planned.name && planned.modified == nil }
                return false
            }
        if unchanged {
            lock.withLock { if changeCount == plan.changes { pendingChanges = false } }
            return
        }
        TestHooks.holdSave()
        let saved: Container
        do {
            // Another program replaced or changed the container: saving would silently undo that.
            guard base.isCurrentOnDisk else {
                throw FileSystemError(EIO, "\(containerPath) was changed by another program while mounted; not saving over that change")
            }
            var edit = base.edit()
            try edit.setLayout(plan.layout)
            saved = try edit.save()
        } catch {
            let reason = shown(FileSystemError.from(error))
            recordError("saving \(containerPath) failed: \(reason); the changes are kept in the mount and saving is retried")
            SystemLog.error("saving \(containerPath) failed: \(reason); the changes are kept in the mount and saving is retried")
            throw reason
        }
        pinnedFolder.reportIfMoved(container: PathText.lastComponent(of: containerPath))
        lock.withLock {
            snapshot = saved
            generation &+= 1
            // Every entry of the view must now point into the saved container: entries of the old
            // one have offsets in a file that no longer exists (after a rewrite).
            var stillPending = false
            for name in order where !temporaries.contains(name) {
                guard let entry = view[name] else { continue }
                switch entry {
                case .stored(let file, let modified):
                    guard let kept = plan.kept[file.name], let now = saved.dataFile(named: kept.name) else {
                        stillPending = true
                        continue
                    }
                    // A time set during the save (touch) is still to be saved (the change count says
                    // so, as it does for a rename during the save).
                    let unsavedTime = modified != nil && modified != kept.modified
                    view[name] = .stored(now, modified: unsavedTime ? modified : nil)
                case .spooled(let spool):
                    // Saved as it is now and nobody can change it: the container has it. A reader
                    // still holding it (`sync FILE`, a thumbnailer) reads the same bytes from the
                    // spool; saving it a second time would deflate it all again.
                    if let done = plan.spools[ObjectIdentifier(spool)], done.generation == spool.generation,
                       spool.writers == 0, let now = saved.dataFile(named: done.name) {
                        view[name] = .stored(now, modified: nil)
                    } else {
                        // Still open for writing when the save began: saved once it is closed.
                        stillPending = stillPending || spool.failed == nil
                    }
                }
            }
            // A change made while the save ran (a removal, a rename, a write) is not in it.
            pendingChanges = stillPending || changeCount != plan.changes
            if !pendingChanges { lastError = lastError.hasPrefix("saving ") ? "" : lastError }
        }
    }

    /// Saves what is pending and removes the spool folder (unmount). If that fails, the unsaved
    /// files are moved, under their own names, into a folder beside the container (nothing is
    /// lost) and the reason is returned. `everyFileClosed`: the kernel ended the session by
    /// unmounting, which it does only once no file of the mount is open any more.
    @discardableResult
    public func close(everyFileClosed: Bool = false) -> String? {
        // The container is free for others once this mount is done with it (a browse mount
        // may open it again at once, and the lock is per open file, not per process).
        defer { containerLock.release() }
        signing.cancelAndWait()
        // The kernel sends RELEASE after close() returns, without waiting, and drops what is
        // still queued when the mount goes: after an unmount a writer whose RELEASE never came
        // had finished all the same. After a signal the queued RELEASEs have been served
        // (cfuse_session_end.h), so a file still with a writer is still being written: it is
        // rescued below.
        lock.withLock {
            if everyFileClosed {
                for case .spooled(let spool) in view.values { spool.writers = 0 }
            }
            handleLock.withLock { handles.removeAll() }
        }
        do { try commit() } catch {
            let message = "\(error); \(rescueUnsavedFiles())"
            FileHandle.standardError.write(Data("asicfs: \(PrintableText.escaped(message))\n".utf8))
            return message
        }
        // (A spool whose write failed is not rescued: its writer was told, and its bytes are partial.)
        let stillOpen = lock.withLock {
            view.contains { name, entry in
                guard case .spooled(let spool) = entry else { return false }
                return spool.failed == nil && !temporaries.contains(name)
            }
        }
        if stillOpen {
            let message = "the mount stopped while files were still open for writing; \(rescueUnsavedFiles())"
            FileHandle.standardError.write(Data("asicfs: \(PrintableText.escaped(message))\n".utf8))
            return message
        }
        lock.withLock {
            handleLock.withLock { handles.removeAll() }
            for (name, entry) in view { if case .spooled = entry { view[name] = nil } }
            spools?.removeAll()
        }
        return nil
    }

    /// Moves every file that is not in the container yet into a new private folder
    /// `<container>.asicfs-unsaved-<time>-XXXXXX/` (`SpoolFolder.makeRescueFolder`): spool files
    /// are renamed there (no space needed), small in-memory ones are written.
    /// Returns a sentence saying where they are and what, if anything, could not be kept.
    private func rescueUnsavedFiles() -> String {
        let folder: String
        pinnedFolder.reportIfMoved(container: PathText.lastComponent(of: containerPath))
        do { folder = try SpoolFolder.makeRescueFolder(forContainer: openPath) } catch {
            let kept = lock.withLock { spools?.keepForRescue(forContainer: openPath) }
            return pinnedFolder.shown("the unsaved files could not be kept (\(error))"
                + (kept.map { " (the raw spool files, for files over 64 KiB, are in \($0))" } ?? ""))
        }
        var lost: [String] = []
        lock.withLock {
            // Editor temporaries are not kept: they were never going to be saved.
            for name in order where !temporaries.contains(name) {
                // A spool whose write failed holds partial bytes; the writer was told already.
                guard case .spooled(let spool) = view[name], spool.failed == nil else { continue }
                let target = folder + "/" + name
                try? FileManager.default.createDirectory(atPath: PathText.folder(of: target), withIntermediateDirectories: true)
                if spool.isOnDisk {
                    if !spool.moveFile(to: target) { lost.append(name) }
                    continue
                }
                do {
                    let output = try PosixFile.createExclusive(target, mode: 0o600)
                    var bytes = [UInt8](repeating: 0, count: Int(spool.size))
                    let count = try bytes.withUnsafeMutableBytes { try spool.read(into: $0, at: 0) }
                    try bytes.withUnsafeBytes { try output.write(UnsafeRawBufferPointer(rebasing: $0[0..<count]), at: 0) }
                    try output.sync()
                } catch {
                    Glibc.unlink(target)
                    lost.append(name)
                }
            }
        }
        if lost.isEmpty {
            lock.withLock { spools?.removeAll() }
            return pinnedFolder.shown("the unsaved files are in \(folder)")
        }
        // Keep whatever is still in the spool folder: renamed, so no later mount cleans it away.
        let kept = lock.withLock { spools?.keep(as: "\(folder)-spool") == true }
        return pinnedFolder.shown("the unsaved files are in \(folder), except \(lost.joined(separator: ", ")), which could not be written there"
            + (kept ? " (the raw spool files, for files over 64 KiB, are in \(folder)-spool)" : ""))
    }

    /// A message (or an error's) that names the container through its held folder, as the user knows it.
    func shown(_ text: String) -> String { pinnedFolder.shown(text) }

    func shown(_ error: FileSystemError) -> FileSystemError {
        FileSystemError(error.code, error.message.map(pinnedFolder.shown))
    }

    // MARK: - Filesystem

    public func fileSystemStatistics() -> statvfs {
        var stats = statvfs()
        statvfs(pinnedFolder.pinnedPath, &stats)
        return stats
    }
}

import ASiC
import CDOC
import Foundation
import Signing

/// One container below a browse mount, open as a `MountRouter`, an `EncryptedMount` or a
/// `SealingMount` (a "child").
final class BrowseChild: @unchecked Sendable {
    /// The container file, relative to the browse folder ("docs/a.asice").
    let relative: String
    /// The container's own router: browse mode hands it the rest of each path.
    let router: any BrowseContainer
    // Guarded by the table's lock:
    /// Requests working on it now; a child in use is never closed.
    var pins = 0
    /// Open browse handles into it.
    var handles = 0
    var lastUsed: UInt64 = 0
    /// When it was last compared with its file on disk (monotonic seconds).
    var lastChecked: Double
    /// Since when no request and no open file has used it (monotonic seconds; nil: in use).
    var idleSince: Double?

    /// The container file's owner and group, which its folder's contents carry: with
    /// default_permissions the kernel then lets the container's owner (and nobody else) edit its
    /// data files. From the file the child opened, and again whenever the folder's own status
    /// is read (a chown on disk changes no size or time, so it opens no new child).
    var owner: (user: uid_t, group: gid_t) {
        get { ownerLock.withLock { knownOwner } }
        set { ownerLock.withLock { knownOwner = newValue } }
    }
    private var knownOwner: (user: uid_t, group: gid_t)
    private let ownerLock = NSLock()

    init(relative: String, router: any BrowseContainer, now: Double) {
        self.relative = relative
        self.router = router
        lastChecked = now
        knownOwner = router.openedOwner
    }

    var isIdle: Bool { pins == 0 && handles == 0 }

    /// What the child reports for `inner`, with the owner it is shown with: the container
    /// file's, except the request files in `.asicfs/sign/`, which stay the daemon's user's. A
    /// signing reads keys, passphrase files and settings with the daemon's rights (root's
    /// under fstab): only that user may start one.
    func attributes(_ inner: String, _ reported: NodeAttributes) -> NodeAttributes {
        if inner.hasPrefix("/" + ControlFolder.name + "/sign/") || inner.hasPrefix("/" + ControlFolder.name + "/decrypt/") { return reported }
        return reported.owned(by: owner)
    }
}

/// The open children of a browse mount, bounded: beyond `limit`, the least recently used idle
/// ones (no request, no open file, nothing unsaved after a save, no signing) are saved and
/// closed in the background. A child idle for `idleRelease` seconds is saved and closed too, so
/// its lock is let go (`asicfs add`, a single mount, `asicfs open` can have the container); it
/// opens again on the next use. A child is also replaced when its file changed on disk while it
/// was idle with nothing unsaved (so another program's change is seen, within a second).
///
/// A container that does not open because another program holds it (its lock, or a hard link
/// to a file open here) or is replacing it is busy (EBUSY, the reason logged), not "not a
/// container": the next access tries again. Only a file that is not a container is remembered
/// as one (shown as the file it is).
///
/// A container is never open twice at once: two children would share a spool folder (named by
/// the daemon's PID). `openLock` serializes opening and closing; `lock` guards the table and
/// is never held while waiting for `openLock`.
final class BrowseChildren: @unchecked Sendable {
    let limit: Int
    /// How often (seconds) a child in use is compared with its file on disk.
    static let checkInterval: Double = 1
    /// How long (seconds) a child stays open after its last request and file: long enough for a
    /// program that opens one file after another, short enough that the CLI soon has it.
    static let idleRelease: Double = 3
    /// Thrown by the opener when the container cannot be opened now (another program holds its
    /// lock): the access answers EBUSY and the next one tries again.
    struct Busy: Error { let reason: String }
    private let lock = NSLock()
    private let openLock = NSLock()
    private var table: [String: BrowseChild] = [:]
    private var tick: UInt64 = 0
    /// Whether a file with a container's name is one (its first bytes, or a failed open), by the
    /// status it had then: a listing looks at each file once, not once a second.
    private var verdicts: [String: (key: FileKey, isContainer: Bool)] = [:]
    /// What children let go when idle had to tell (last error, how the last signing ended), by
    /// the status of their file then: given back when it opens again unchanged.
    private var memories: [String: (key: FileKey, memory: MountRouter.Memory)] = [:]
    /// Folders whose stale spools (of killed daemons) were removed.
    private var cleanedFolders: Set<String> = []
    /// What closing a child could not save (reported at unmount, as a single mount does).
    private var failures: [String] = []
    private let evictionQueue = DispatchQueue(label: "asicfs.browse.evict")
    private var evictionScheduled = false
    private var idleReleaseScheduled = false
    /// Opens the container at a relative path as a child, ready to serve (set once, at start).
    var opener: ((String) throws -> any BrowseContainer)?
    /// Called (outside the locks) with a child opened again after an outside change.
    var reopened: (@Sendable (BrowseChild) -> Void)?
    /// Called with a child just closed because it was idle: the file may change before it is
    /// opened again (`asicfs add`), so the kernel must not keep what it cached of it.
    var letGo: (@Sendable (BrowseChild) -> Void)?

    /// The browse folder (the children's paths are relative to it).
    let root: String

    init(root: String, limit: Int) {
        self.root = root
        self.limit = max(1, limit)
    }

    /// Device, inode, size and modification time: a file replaced or rewritten differs.
    struct FileKey: Equatable {
        let device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int
        init(_ st: stat) {
            device = UInt64(st.st_dev)
            inode = UInt64(st.st_ino)
            size = Int64(st.st_size)
            seconds = st.st_mtim.tv_sec
            nanoseconds = st.st_mtim.tv_nsec
        }
    }

    static func fileKey(_ path: String) -> FileKey? {
        var st = stat()
        return stat(path, &st) == 0 ? FileKey(st) : nil
    }

    static var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    var count: Int { lock.withLock { table.count } }

    /// The child open for `relative`, pinned, without opening one (nil when none is open).
    func existing(_ relative: String) -> BrowseChild? {
        lock.withLock { table[relative].map(pin) }
    }

    /// The open child of `relative` without pinning it (for attributes only).
    func peek(_ relative: String) -> BrowseChild? { lock.withLock { table[relative] } }

    /// What is known of whether the file with this status is a container.
    func verdict(_ relative: String, _ status: stat) -> Bool? {
        lock.withLock { verdicts[relative].flatMap { $0.key == FileKey(status) ? $0.isContainer : nil } }
    }

    func record(_ relative: String, _ status: stat, isContainer: Bool) {
        lock.withLock {
            if verdicts.count > 20_000 { verdicts = [:] }
            verdicts[relative] = (FileKey(status), isContainer)
        }
    }

    /// The child for the container file `relative`, pinned (call `unpin`): the open one (checked
    /// against its file at most once a second), or a newly opened one. Nil when the file does not
    /// open as a container (it is then shown as a file).
    func acquire(_ relative: String, status: stat?) throws -> BrowseChild? {
        let now = Self.now
        if let child = lock.withLock({ () -> BrowseChild? in
            guard let child = table[relative], child.isIdle == false || now - child.lastChecked < Self.checkInterval else { return nil }
            return pin(child)
        }) { return child }
        // Open but due for a check (and idle), or not open.
        if let child = lock.withLock({ table[relative] }) {
            if !child.router.changedOnDiskWhileIdle() {
                return lock.withLock {
                    child.lastChecked = now
                    return pin(child)
                }
            }
            openLock.withLock {
                let idle = lock.withLock { () -> Bool in
                    guard table[relative] === child, child.isIdle else { return false }
                    table[relative] = nil
                    return true
                }
                if idle, let failure = child.router.close() { lock.withLock { failures.append(failure) } }
            }
            if let child = try openChild(relative, status: nil) {
                reopened?(child)
                return child
            }
            return nil
        }
        return try openChild(relative, status: status)
    }

    private func openChild(_ relative: String, status: stat?) throws -> BrowseChild? {
        let child = try openLock.withLock { () -> BrowseChild? in
            if let child = lock.withLock({ table[relative].map(pin) }) { return child }
            if let status, verdict(relative, status) == false { return nil }
            let folder = PathText.parent(of: relative)
            if lock.withLock({ cleanedFolders.insert(folder).inserted }) {
                SpoolFolder.removeStale(in: folder.isEmpty ? root : root + "/" + folder, base: nil)
            }
            let fileSystem: any BrowseContainer
            do {
                fileSystem = try opener!(relative)
            } catch let busy as Busy {
                throw Self.busy(relative, busy.reason)
            } catch is CDOCError {
                // An encrypted container whose header does not read: the file it is, as a broken ZIP.
                if let status { record(relative, status, isContainer: false) }
                return nil
            } catch let error as ContainerError {
                switch error {
                case .io: throw FileSystemError.from(error)
                case .corruptZip, .notASiC, .invalidXML, .invalidName, .dataMismatch, .unsupported, .refused:
                    // Not a container (or a broken one): from now on shown as the file it is.
                    if let status { record(relative, status, isContainer: false) }
                    return nil
                case .noSuchFile, .notRegularFile:
                    // Replaced meanwhile (by a folder, a FIFO): nothing to remember.
                    throw Self.busy(relative, error.description)
                }
            }
            if let kept = lock.withLock({ memories.removeValue(forKey: relative) }), let key = Self.fileKey(fileSystem.containerPath),
               key == kept.key {
                fileSystem.restore(kept.memory)
            }
            let child = BrowseChild(relative: relative, router: fileSystem, now: Self.now)
            return lock.withLock {
                table[relative] = child
                return pin(child)
            }
        }
        if child != nil { scheduleEviction() }
        return child
    }

    /// EBUSY for a container that cannot be opened now, with the reason logged.
    private static func busy(_ relative: String, _ reason: String) -> FileSystemError {
        let message = "cannot open \(relative) now: \(reason); it is tried again on the next access"
        SystemLog.report(message)
        return FileSystemError(EBUSY, message)
    }

    /// Marks a child used by one more request (the caller holds `lock`).
    private func pin(_ child: BrowseChild) -> BrowseChild {
        child.pins += 1
        child.idleSince = nil
        tick += 1
        child.lastUsed = tick
        return child
    }

    func unpin(_ child: BrowseChild) {
        let (over, idle) = lock.withLock { () -> (Bool, Bool) in
            child.pins -= 1
            return (table.count > limit, becameIdle(child))
        }
        if over { scheduleEviction() }
        if idle { scheduleIdleRelease() }
    }

    func opened(_ child: BrowseChild) {
        lock.withLock {
            child.handles += 1
            child.idleSince = nil
        }
    }

    func closed(_ child: BrowseChild) {
        let (over, idle) = lock.withLock { () -> (Bool, Bool) in
            child.handles -= 1
            return (table.count > limit, becameIdle(child))
        }
        if over { scheduleEviction() }
        if idle { scheduleIdleRelease() }
    }

    /// Notes when a child became idle; true if it just did (the caller holds `lock`).
    private func becameIdle(_ child: BrowseChild) -> Bool {
        guard child.isIdle, table[child.relative] === child else { return false }
        child.idleSince = Self.now
        return true
    }

    /// Closes the child of `relative` (saving it first) so its file can be renamed or removed.
    /// Refused (EBUSY) while it is in use by others than the caller (`pinnedByCaller`), has
    /// open files or a signing runs; a failed save is thrown and the child stays open.
    func close(_ relative: String, pinnedByCaller: Int = 0) throws {
        guard let child = lock.withLock({ table[relative] }) else { return }
        try child.router.commit()
        try openLock.withLock {
            try lock.withLock {
                guard table[relative] === child else { return }
                guard child.pins <= pinnedByCaller, child.handles == 0, child.router.currentActivity == nil else {
                    throw FileSystemError(EBUSY, "cannot change \(relative): it is in use (an open file, or a signing runs)")
                }
                table[relative] = nil
            }
            if let failure = child.router.close() { lock.withLock { failures.append(failure) } }
        }
    }

    /// Adds a child that has no file yet (a new encrypted container, `mkdir new.cdoc2`); EEXIST
    /// when one is open at that name.
    func insert(_ relative: String, _ router: any BrowseContainer) throws {
        try openLock.withLock {
            try lock.withLock {
                guard table[relative] == nil else { throw FileSystemError(EEXIST) }
                let child = BrowseChild(relative: relative, router: router, now: Self.now)
                tick += 1
                child.lastUsed = tick
                child.idleSince = Self.now
                table[relative] = child
            }
        }
        scheduleEviction()
    }

    /// Takes the child of `relative` out without closing it (rmdir of an unsealed new encrypted
    /// container, which is discarded); EBUSY while others use it.
    func takeOut(_ relative: String, pinnedByCaller: Int) throws -> BrowseChild? {
        try openLock.withLock {
            try lock.withLock {
                guard let child = table[relative] else { return nil }
                guard child.pins <= pinnedByCaller, child.handles == 0 else {
                    throw FileSystemError(EBUSY, "cannot remove \(relative): it is in use (an open file)")
                }
                table[relative] = nil
                return child
            }
        }
    }

    /// The next access compares the child with its file on disk (it was just sealed into it).
    func checkSoon(_ relative: String) {
        lock.withLock { table[relative]?.lastChecked = -.infinity }
    }

    /// The children at or below folder `relative` ("." for all) that have no file yet.
    func awaitingSeal(below relative: String) -> [BrowseChild] {
        lock.withLock {
            table.values.filter { child in
                child.router.awaitsSeal && (relative == "." || child.relative.hasPrefix(relative + "/"))
            }
        }
    }

    /// The relative paths of the open children at or below folder `relative` ("." for all).
    func open(below relative: String) -> [String] {
        lock.withLock {
            table.keys.filter { relative == "." || $0.hasPrefix(relative + "/") || $0 == relative }
        }
    }

    /// Forgets what is known about files below `relative` (renamed or removed).
    func forget(below relative: String) {
        lock.withLock {
            for key in verdicts.keys where key == relative || key.hasPrefix(relative + "/") { verdicts[key] = nil }
        }
    }

    private func scheduleEviction() {
        let start = lock.withLock { () -> Bool in
            guard table.count > limit, !evictionScheduled else { return false }
            evictionScheduled = true
            return true
        }
        if start { evictionQueue.async { [self] in evict() } }
    }

    /// Closes least recently used idle children until at most `limit` are open.
    private func evict() {
        var skipped: Set<ObjectIdentifier> = []
        while true {
            let candidate = lock.withLock { () -> BrowseChild? in
                guard table.count > limit else { return nil }
                return table.values.filter { $0.isIdle && !skipped.contains(ObjectIdentifier($0)) }.min { $0.lastUsed < $1.lastUsed }
            }
            guard let child = candidate else { break }
            skipped.insert(ObjectIdentifier(child))
            closeIfIdle(child)
        }
        lock.withLock { evictionScheduled = false }
        // Children that were busy may be idle now; the next unpin or close tries again.
    }

    /// Saves and closes a child that is idle with nothing running; true if it was closed.
    /// A child whose save fails stays open (its changes are kept; unmount rescues them).
    @discardableResult
    private func closeIfIdle(_ child: BrowseChild) -> Bool {
        let fileSystem = child.router
        if fileSystem.currentActivity != nil { return false }
        if fileSystem.hasPendingChanges { try? fileSystem.commit() }
        return openLock.withLock {
            let removed = lock.withLock { () -> Bool in
                guard table[child.relative] === child, child.isIdle, fileSystem.currentActivity == nil,
                      !fileSystem.hasPendingChanges else { return false }
                table[child.relative] = nil
                return true
            }
            guard removed else { return false }
            letGo?(child)
            let memory = fileSystem.keptMemory
            if let failure = fileSystem.close() { lock.withLock { failures.append(failure) } }
            if let memory, !memory.isEmpty, let key = Self.fileKey(fileSystem.containerPath) {
                lock.withLock {
                    if memories.count > 10_000 { memories = [:] }
                    memories[child.relative] = (key, memory)
                }
            }
            TestHooks.noteReleased(child.relative)
            return true
        }
    }

    private func scheduleIdleRelease(after delay: Double = BrowseChildren.idleRelease) {
        let start = lock.withLock { () -> Bool in
            guard !idleReleaseScheduled else { return false }
            idleReleaseScheduled = true
            return true
        }
        if start { evictionQueue.asyncAfter(deadline: .now() + delay) { [self] in releaseIdle() } }
    }

    /// Closes the children idle for `idleRelease` seconds; comes back for those idle for less,
    /// or held by a signing that runs with no file open.
    private func releaseIdle() {
        let now = Self.now
        let (due, soonest) = lock.withLock { () -> ([BrowseChild], Double?) in
            idleReleaseScheduled = false
            let idle = table.values.compactMap { child in child.idleSince.map { (child, $0) } }.filter { $0.0.isIdle }
            let due = idle.filter { now - $0.1 >= Self.idleRelease }.map(\.0)
            let soonest = idle.map { $0.1 + Self.idleRelease }.filter { $0 > now }.min()
            return (due, soonest)
        }
        var retry = false
        for child in due where !closeIfIdle(child) {
            retry = retry || child.router.currentActivity != nil
        }
        if let soonest { scheduleIdleRelease(after: max(0.05, soonest - now)) }
        else if retry { scheduleIdleRelease() }
    }

    /// Unmount: saves and closes every child; what could not be saved, one sentence each.
    func closeAll(everyFileClosed: Bool) -> [String] {
        let children = lock.withLock { () -> [BrowseChild] in
            defer { table = [:] }
            return Array(table.values)
        }
        var messages = lock.withLock { failures }
        for child in children {
            if let failure = child.router.close(everyFileClosed: everyFileClosed) { messages.append(failure) }
        }
        return messages
    }
}

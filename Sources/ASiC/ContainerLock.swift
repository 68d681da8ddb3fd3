import Foundation
import Synchronization

/// One writer of a container at a time: a mount, or `asicfs add`, `remove`, `sign`, `extend`,
/// holds an exclusive flock(2) on the container file while it works, and a second one fails at
/// once with a line that names the holder (the mount point of a mount). The kernel drops the lock
/// when the holder exits, however it ends. A save replaces the file (a new inode), so the lock
/// moves with it: `AtomicSave` locks the temporary before renaming it into place.
public final class ContainerLock: @unchecked Sendable {
    /// The file locked (symbolic links followed, as saves follow them).
    public let path: String
    private var fd: Int32

    /// The locks this process holds, by path: a save must move the right one. Held weakly: the
    /// table never keeps a lock alive, so no lock's deinit (which takes this mutex) can ever run
    /// while the mutex is held, when an entry is replaced or removed.
    private static let held = Mutex<[String: WeakLock]>([:])

    private final class WeakLock: @unchecked Sendable {
        weak var lock: ContainerLock?
        init(_ lock: ContainerLock) { self.lock = lock }
    }

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit { release() }

    /// Takes the lock, or fails with who holds it. Retries when the file was replaced between
    /// opening and locking (another writer's save): the lock must be on the file now there.
    /// `shownAs`: the container's path as the user knows it, when `containerPath` reaches it
    /// through a held folder (messages, and finding the mount that holds it, use that).
    public static func acquire(_ containerPath: String, shownAs: String? = nil) throws -> ContainerLock {
        let path = AtomicSave.resolvedTarget(containerPath)
        for _ in 0..<8 {
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { throw ContainerError.io(path: shownAs ?? containerPath, operation: "cannot open", errno: errno) }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                let code = errno
                var st = stat()
                fstat(fd, &st)
                close(fd)
                if code == EWOULDBLOCK { throw ContainerError.refused(holder(of: st, path: shownAs ?? path)) }
                throw ContainerError.io(path: shownAs ?? containerPath, operation: "cannot lock", errno: code)
            }
            var locked = stat(), current = stat()
            if fstat(fd, &locked) == 0, stat(path, &current) == 0, locked.st_ino == current.st_ino, locked.st_dev == current.st_dev {
                let lock = ContainerLock(path: path, fd: fd)
                held.withLock { $0[path] = WeakLock(lock) }
                return lock
            }
            close(fd)
        }
        throw ContainerError.refused("the file keeps being replaced by another program; try again")
    }

    /// Gives the lock up (also done at exit by the kernel).
    public func release() {
        // In deinit the weak reference already reads nil: an entry that leads nowhere goes too.
        Self.held.withLock { locks in
            if let entry = locks[path], entry.lock == nil || entry.lock === self { locks[path] = nil }
        }
        if fd >= 0 { close(fd) }
        fd = -1
    }

    /// Before `temporary` is renamed over `target`: when this process holds the lock on
    /// `target`, the temporary is locked too (no one else has it open yet), and once it is in
    /// place `finish` makes it the held file. Returns nil when there is no lock to move.
    static func moveLock(of target: String, to temporary: PosixFile) -> (finish: () -> Void, abandon: () -> Void)? {
        guard let lock = held.withLock({ $0[target]?.lock }) else { return nil }
        let fd = fcntl(temporary.fd, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0, flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            if fd >= 0 { close(fd) }
            return nil
        }
        return (finish: {
            let old = lock.fd
            lock.fd = fd
            if old >= 0 { close(old) }
        }, abandon: { close(fd) })
    }

    /// "mounted at MP by asicfs (pid N); …" or "in use by NAME (pid N)", from the kernel's
    /// table of locks and the mount table.
    static func holder(of locked: stat, path: String) -> String {
        guard let locker = lockingProcess(of: locked) else {
            return "another program is changing it; try again when it is done"
        }
        let pid = processHolding(locked) ?? locker
        if let mountpoint = asicfsMountpoint(of: path) {
            return "it is mounted at \(mountpoint) by asicfs (pid \(pid)); unmount it first (asicfs umount \(mountpoint))"
        }
        if let (folder, mountpoint) = asicfsBrowseMount(containing: path) {
            let inside = mountpoint + path.dropFirst(folder.count)
            return "it is open in the asicfs browse mount at \(mountpoint) (as \(inside), pid \(pid)); "
                + "it is saved and let go when idle, or unmount (asicfs umount \(mountpoint))"
        }
        let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "another program"
        return "\(name) (pid \(pid)) is changing it; try again when it is done"
    }

    /// The process holding a FLOCK on that inode, from /proc/locks
    /// ("1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF": pid, then MAJOR:MINOR:INODE in hex, hex, decimal).
    static func lockingProcess(of locked: stat) -> Int32? {
        guard let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        let device = (major: UInt64(locked.st_dev) >> 8 & 0xFFF, minor: UInt64(locked.st_dev) & 0xFF | (UInt64(locked.st_dev) >> 12) & 0xFFF00)
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", !line.contains("->") else { continue }
            let id = fields[5].split(separator: ":")
            guard id.count == 3, UInt64(id[0], radix: 16) == device.major, UInt64(id[1], radix: 16) == device.minor,
                  UInt64(id[2]) == UInt64(locked.st_ino) else { continue }
            return Int32(fields[4])
        }
        return nil
    }

    /// The process that holds the lock now. /proc/locks names the process that took it, which for
    /// a mount is `asicfs mount` before it forked its daemon and exited; the holder is the one
    /// with a descriptor of that inode whose fdinfo shows the lock.
    static func processHolding(_ locked: stat) -> Int32? {
        guard let processes = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        for process in processes {
            guard let pid = Int32(process), let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/fd") else {
                continue
            }
            for fd in fds {
                var st = stat()
                guard stat("/proc/\(process)/fd/\(fd)", &st) == 0, st.st_ino == locked.st_ino, st.st_dev == locked.st_dev,
                      let info = try? String(contentsOfFile: "/proc/\(process)/fdinfo/\(fd)", encoding: .utf8),
                      info.contains("FLOCK") else { continue }
                return pid
            }
        }
        return nil
    }

    /// Where asicfs mounted `path`, from /proc/self/mountinfo (fsname is the container's path;
    /// the table escapes spaces and the like as \\ooo).
    public static func asicfsMountpoint(of path: String) -> String? {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        for line in table.split(separator: "\n") {
            let halves = line.components(separatedBy: " - ")
            guard halves.count == 2 else { continue }
            let tail = halves[1].split(separator: " ")
            guard tail.count >= 2, tail[0] == "fuse.asicfs", unescape(String(tail[1])) == path else { continue }
            let head = halves[0].split(separator: " ")
            if head.count >= 5 { return unescape(String(head[4])) }
        }
        return nil
    }

    /// The browse mount (its folder and mount point) whose folder holds `path`.
    static func asicfsBrowseMount(containing path: String) -> (folder: String, mountpoint: String)? {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        for line in table.split(separator: "\n") {
            let halves = line.components(separatedBy: " - ")
            guard halves.count == 2 else { continue }
            let tail = halves[1].split(separator: " ")
            guard tail.count >= 2, tail[0] == "fuse.asicfs" else { continue }
            let folder = unescape(String(tail[1]))
            let head = halves[0].split(separator: " ")
            if head.count >= 5, path.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/") {
                return (folder, unescape(String(head[4])))
            }
        }
        return nil
    }

    private static func unescape(_ field: String) -> String {
        var bytes: [UInt8] = []
        let raw = Array(field.utf8)
        var index = 0
        while index < raw.count {
            if raw[index] == 0x5C, index + 3 < raw.count, let value = UInt8(String(decoding: raw[(index + 1)...(index + 3)], as: UTF8.self), radix: 8) {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(raw[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

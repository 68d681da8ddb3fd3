import CLinux
import Foundation

/// Who sent a FUSE request: the caller's filesystem user and group ids and its process.
struct Caller: Equatable, Sendable {
    let user: uid_t
    let group: gid_t
    let process: pid_t
}

/// The caller of the request this thread serves. The FUSE adaptor sets it around every request;
/// the source's interface stays in paths, and only the pass-through asks (`CallerRights`).
enum RequestCaller {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    static func serving<T>(_ caller: Caller, _ body: () throws -> T) rethrows -> T {
        let slot = UnsafeMutablePointer<Caller>.allocate(capacity: 1)
        slot.initialize(to: caller)
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, slot)
        defer {
            pthread_setspecific(key, previous)
            slot.deinitialize(count: 1)
            slot.deallocate()
        }
        return try body()
    }

    static var current: Caller? { pthread_getspecific(key)?.assumingMemoryBound(to: Caller.self).pointee }
}

/// Real files in a browse mount are touched with the rights of the process that asked, so that
/// with `-o allow_other` the kernel's own permission checks apply to every user (on the real
/// modes, owners and ACLs of that moment, not the ones the kernel cached a second ago), and a
/// file another user makes belongs to them. For one call on this thread only: the filesystem
/// ids (setfsuid/setfsgid, which also drop the daemon's file capabilities while they are not
/// 0) and the supplementary groups (the raw system call, see CLinux), put back afterwards.
///
/// Only a daemon running as root can take another user's rights. A daemon of an ordinary user
/// (allow_other through user_allow_other) serves everyone with its own rights; the kernel then
/// checks the modes shown (default_permissions) and the pass-through never follows a link.
enum CallerRights {
    static let daemonUser = geteuid()
    static let daemonGroup = getegid()
    static let daemonGroups: [gid_t] = {
        let count = getgroups(0, nil)
        guard count > 0 else { return [] }
        var groups = [gid_t](repeating: 0, count: Int(count))
        let got = getgroups(count, &groups)
        return Array(groups.prefix(Int(max(got, 0))))
    }()

    /// The caller of this request when it is not the daemon's own user (and group).
    static var foreignCaller: Caller? {
        guard let caller = RequestCaller.current, caller.user != daemonUser || caller.group != daemonGroup else { return nil }
        return caller
    }

    /// Who a file this request makes will belong to: the caller when the daemon can take their
    /// rights, else the daemon's user.
    static var ownerOfNewFiles: (uid_t, gid_t) {
        guard daemonUser == 0, let caller = RequestCaller.current else { return (daemonUser, daemonGroup) }
        return (caller.user, caller.group)
    }

    /// Runs `body` with the caller's rights (see above); EPERM when they cannot be taken.
    @discardableResult
    static func run<T>(_ body: () throws -> T) throws -> T {
        guard daemonUser == 0, let caller = foreignCaller else { return try body() }
        // Already taken by an outer call: restoring at the end of this one would leave the
        // rest of the outer call with the daemon's rights.
        if clinux_setfsuid(uid_t.max) != daemonUser || clinux_setfsgid(gid_t.max) != daemonGroup { return try body() }
        let groups = supplementaryGroups(of: caller)
        defer { restore() }
        guard take(caller, groups: groups) else { throw FileSystemError(EPERM) }
        return try body()
    }

    private static func take(_ caller: Caller, groups: [gid_t]) -> Bool {
        guard clinux_setgroups_thread(groups.count, groups) == 0 else { return false }
        _ = clinux_setfsgid(caller.group)
        guard clinux_setfsgid(gid_t.max) == caller.group else { return false }
        _ = clinux_setfsuid(caller.user)
        return clinux_setfsuid(uid_t.max) == caller.user
    }

    /// The daemon's ids again. Cannot fail for root: fsuid 0 first gives the capabilities back.
    private static func restore() {
        _ = clinux_setfsuid(daemonUser)
        _ = clinux_setfsgid(daemonGroup)
        _ = clinux_setgroups_thread(daemonGroups.count, daemonGroups)
    }

    /// The caller's supplementary groups, from /proc/PID/status when that process still has the
    /// caller's filesystem ids (a PID can be reused); none otherwise: fewer rights, never more.
    static func supplementaryGroups(of caller: Caller) -> [gid_t] {
        guard caller.process > 0, let text = readSmallFile("/proc/\(caller.process)/status") else { return [] }
        var fileSystemUser: uid_t?, fileSystemGroup: gid_t?, groups: [gid_t] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
            guard let label = fields.first else { continue }
            switch label {
            case "Uid:" where fields.count == 5: fileSystemUser = uid_t(fields[4])
            case "Gid:" where fields.count == 5: fileSystemGroup = gid_t(fields[4])
            case "Groups:": groups = fields.dropFirst().compactMap { gid_t($0) }
            default: continue
            }
        }
        guard fileSystemUser == caller.user, fileSystemGroup == caller.group else { return [] }
        return groups
    }

    /// A /proc file (its size reads as 0, so read to the end).
    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 16 {
            let count = read(fd, &chunk, chunk.count)
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

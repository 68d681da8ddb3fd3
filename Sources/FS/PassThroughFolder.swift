import CLinux
import Foundation

/// The real folder under a browse mount. Every call names a path relative to it ("." is the
/// folder itself) and, whatever another user changes on disk meanwhile, never follows a
/// symbolic link:
/// - the folder holding the last component is opened with openat2(RESOLVE_NO_SYMLINKS |
///   RESOLVE_BENEATH) from the folder's O_PATH descriptor: a link anywhere on the way fails the
///   call (ELOOP), and nothing outside the folder is reached;
/// - the last component is acted on with a *at() call that does not follow it either
///   (AT_SYMLINK_NOFOLLOW, O_NOFOLLOW, or /proc/self/fd/N of that folder with an l*xattr call):
///   a link is only ever read or shown as a link;
/// - the call runs with the rights of the process that asked (`CallerRights`).
/// Failures are the call's errno as it is (`FileSystemError(errno)`).
///
/// Why paths resolved again for every call rather than a descriptor per node (libfuse's
/// passthrough_hp, virtiofsd): those serve the low-level API, where the kernel names a node by
/// our id and says when it may go (FORGET). The high-level API we use gives a path per request
/// and no FORGET; a path->descriptor table would have to follow every rename and unlink,
/// including those other programs make on disk, or else act on a file that has moved
/// elsewhere. Resolving each path from the one root descriptor, never through a link, keeps no
/// state: a name swapped on disk between two requests is acted on as whatever is there now (a
/// link as a link) with the caller's own rights, which is what that caller could do on the
/// folder directly.
final class PassThroughFolder: @unchecked Sendable {
    let path: String
    let fd: Int32

    init(_ path: String) throws {
        fd = Glibc.open(path, clinux_o_path() | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError(errno, "cannot open the folder \(path): \(String(cString: strerror(errno)))") }
        self.path = path
    }

    deinit { Glibc.close(fd) }

    /// The full path of a relative one (for code that takes paths: the container core).
    func full(_ relative: String) -> String { relative == "." ? path : path + "/" + relative }

    /// Throws the current errno when `result` says the call failed.
    @discardableResult
    func check<T: BinaryInteger>(_ result: T) throws -> T {
        if result < 0 { throw FileSystemError(errno) }
        return result
    }

    /// `body` with the folder that holds `relative`'s last component (opened without following
    /// a link, see above) and that component's name, with the daemon's rights.
    func inParent<T>(_ relative: String, _ body: (Int32, String) throws -> T) throws -> T {
        guard let slash = relative.lastIndex(of: "/") else { return try body(fd, relative) }
        let parent = try check(clinux_open_beneath(fd, String(relative[..<slash]), clinux_o_path() | O_DIRECTORY | O_CLOEXEC))
        defer { Glibc.close(parent) }
        return try body(parent, String(relative[relative.index(after: slash)...]))
    }

    /// A new descriptor of the folder that holds `relative`'s last component, opened without
    /// following a link (as in `inParent`), with the daemon's rights; the caller closes it.
    func parentDescriptor(_ relative: String) throws -> Int32 {
        guard let slash = relative.lastIndex(of: "/") else { return try check(fcntl(fd, F_DUPFD_CLOEXEC, 0)) }
        return try check(clinux_open_beneath(fd, String(relative[..<slash]), clinux_o_path() | O_DIRECTORY | O_CLOEXEC))
    }

    /// `inParent` with the caller's rights: what every request on a real file goes through.
    @discardableResult
    func asCaller<T>(_ relative: String, _ body: (Int32, String) throws -> T) throws -> T {
        try CallerRights.run { try inParent(relative, body) }
    }

    func status(_ relative: String) throws -> stat {
        try asCaller(relative) { parent, name in
            var st = stat()
            try check(fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW))
            return st
        }
    }

    /// Device and inode of the file at `relative`, reached without links, with the daemon's rights.
    func fileIdentity(_ relative: String) -> (device: UInt64, inode: UInt64)? {
        var st = stat()
        guard (try? inParent(relative, { parent, name in try check(fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW)) })) != nil else {
            return nil
        }
        return (UInt64(st.st_dev), UInt64(st.st_ino))
    }

    /// lstat that answers nil instead of throwing (for probing a path).
    func statusIfAny(_ relative: String) -> stat? { try? status(relative) }

    /// The entries of a folder with their status (lstat), without "." and "..".
    func entries(_ relative: String) throws -> [(name: String, status: stat)] {
        try asCaller(relative) { parent, name in
            let folder = try check(openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
            guard let stream = fdopendir(folder) else {
                let code = errno
                Glibc.close(folder)
                throw FileSystemError(code)
            }
            defer { closedir(stream) }
            var result: [(String, stat)] = []
            while let entry = readdir(stream) {
                let name = withUnsafePointer(to: entry.pointee.d_name) {
                    $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
                }
                if name == "." || name == ".." { continue }
                var st = stat()
                // Gone meanwhile (another program removed it): not listed.
                if fstatat(folder, name, &st, AT_SYMLINK_NOFOLLOW) == 0 { result.append((name, st)) }
            }
            return result
        }
    }

    /// Whether a regular file starts like a ZIP archive (a local header, or the end record of an
    /// empty one): one small read, so a listing does not open every container. With the
    /// daemon's rights: it only decides how a name is shown (the same to everyone); entering a
    /// container checks the caller's right to read it.
    func startsLikeZIP(_ relative: String) -> Bool {
        let file = (try? inParent(relative) { parent, name in
            openat(parent, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        }) ?? -1
        guard file >= 0 else { return false }
        defer { Glibc.close(file) }
        var magic = [UInt8](repeating: 0, count: 4)
        guard pread(file, &magic, 4, 0) == 4 else { return false }
        return magic == [0x50, 0x4b, 0x03, 0x04] || magic == [0x50, 0x4b, 0x05, 0x06]
    }

    func open(_ relative: String, flags: Int32) throws -> Int32 {
        try asCaller(relative) { parent, name in try check(openat(parent, name, flags | O_NOFOLLOW | O_CLOEXEC)) }
    }

    /// Opens again the file behind a descriptor we hold (a file removed while open).
    func reopen(_ descriptor: Int32, flags: Int32) throws -> Int32 {
        try CallerRights.run { try check(Glibc.open("/proc/self/fd/\(descriptor)", flags | O_CLOEXEC)) }
    }

    func create(_ relative: String, flags: Int32, mode: mode_t) throws -> Int32 {
        try asCaller(relative) { parent, name in
            try check(openat(parent, name, flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode))
        }
    }

    func truncate(_ relative: String, to length: Int64) throws {
        try asCaller(relative) { parent, name in
            let file = try check(openat(parent, name, O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW))
            defer { Glibc.close(file) }
            try check(ftruncate(file, off_t(length)))
        }
    }

    func unlink(_ relative: String) throws {
        try asCaller(relative) { parent, name in try check(unlinkat(parent, name, 0)) }
    }

    func makeFolder(_ relative: String, mode: mode_t) throws {
        try asCaller(relative) { parent, name in try check(mkdirat(parent, name, mode)) }
    }

    func removeFolder(_ relative: String) throws {
        try asCaller(relative) { parent, name in try check(unlinkat(parent, name, AT_REMOVEDIR)) }
    }

    func rename(_ from: String, to: String, flags: UInt32) throws {
        try asCaller(from) { fromParent, fromName in
            try inParent(to) { toParent, toName in
                try check(clinux_renameat2(fromParent, fromName, toParent, toName, flags))
            }
        }
    }

    /// A hard link (a link itself is linked, never the file it names: linkat without AT_SYMLINK_FOLLOW).
    func link(_ from: String, to: String) throws {
        try asCaller(from) { fromParent, fromName in
            try inParent(to) { toParent, toName in try check(linkat(fromParent, fromName, toParent, toName, 0)) }
        }
    }

    func setTimes(_ relative: String, _ times: [timespec]) throws {
        try asCaller(relative) { parent, name in try check(utimensat(parent, name, times, AT_SYMLINK_NOFOLLOW)) }
    }

    /// chmod; a link's own mode cannot change on Linux (EOPNOTSUPP), and the file it names is never reached.
    func setMode(_ relative: String, _ mode: mode_t) throws {
        try asCaller(relative) { parent, name in try check(fchmodat(parent, name, mode, AT_SYMLINK_NOFOLLOW)) }
    }

    func setOwner(_ relative: String, user: uid_t, group: gid_t) throws {
        try asCaller(relative) { parent, name in try check(fchownat(parent, name, user, group, AT_SYMLINK_NOFOLLOW)) }
    }

    func makeSymlink(_ relative: String, target: String) throws {
        try asCaller(relative) { parent, name in try check(symlinkat(target, parent, name)) }
    }

    func readSymlink(_ relative: String) throws -> String {
        try asCaller(relative) { parent, name in
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = try check(readlinkat(parent, name, &buffer, buffer.count - 1))
            return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// Whether the caller may do `mode` (R_OK, W_OK | X_OK ...) on a path.
    func access(_ relative: String, _ mode: Int32) throws {
        try asCaller(relative) { parent, name in try check(faccessat(parent, name, mode, AT_EACCESS | AT_SYMLINK_NOFOLLOW)) }
    }

    func statistics() throws -> statvfs {
        var stats = statvfs()
        try check(fstatvfs(fd, &stats))
        return stats
    }
}

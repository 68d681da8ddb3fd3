import CLinux
import Foundation

/// The real folder under a browse mount: every call is a POSIX *at() call relative to one
/// O_PATH descriptor of the folder, with paths relative to it ("." is the folder itself), and
/// every failure is the caller's errno as it is (`FileSystemError(errno)`). The kernel resolves
/// symbolic links itself (we report them as links), so no path we get crosses one.
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
    private func check<T: BinaryInteger>(_ result: T) throws -> T {
        if result < 0 { throw FileSystemError(errno) }
        return result
    }

    func status(_ relative: String) throws -> stat {
        var st = stat()
        try check(fstatat(fd, relative, &st, AT_SYMLINK_NOFOLLOW))
        return st
    }

    /// lstat that answers nil instead of throwing (for probing a path).
    func statusIfAny(_ relative: String) -> stat? {
        var st = stat()
        return fstatat(fd, relative, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st : nil
    }

    /// The entries of a folder with their status (lstat), without "." and "..".
    func entries(_ relative: String) throws -> [(name: String, status: stat)] {
        let folder = try check(openat(fd, relative, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
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

    /// Whether a regular file starts like a ZIP archive (a local header, or the end record of an
    /// empty one): one small read, so a listing does not open every container.
    func startsLikeZIP(_ relative: String) -> Bool {
        let file = openat(fd, relative, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard file >= 0 else { return false }
        defer { Glibc.close(file) }
        var magic = [UInt8](repeating: 0, count: 4)
        guard pread(file, &magic, 4, 0) == 4 else { return false }
        return magic == [0x50, 0x4b, 0x03, 0x04] || magic == [0x50, 0x4b, 0x05, 0x06]
    }

    func open(_ relative: String, flags: Int32) throws -> Int32 {
        try check(openat(fd, relative, flags | O_CLOEXEC))
    }

    func create(_ relative: String, flags: Int32, mode: mode_t) throws -> Int32 {
        try check(openat(fd, relative, flags | O_CREAT | O_CLOEXEC, mode))
    }

    func truncate(_ relative: String, to length: Int64) throws {
        let file = try check(openat(fd, relative, O_WRONLY | O_CLOEXEC | O_NONBLOCK))
        defer { Glibc.close(file) }
        try check(ftruncate(file, off_t(length)))
    }

    func unlink(_ relative: String) throws { try check(unlinkat(fd, relative, 0)) }

    func makeFolder(_ relative: String, mode: mode_t) throws { try check(mkdirat(fd, relative, mode)) }

    func removeFolder(_ relative: String) throws { try check(unlinkat(fd, relative, AT_REMOVEDIR)) }

    func rename(_ from: String, to: String, flags: UInt32) throws {
        try check(clinux_renameat2(fd, from, fd, to, flags))
    }

    func setTimes(_ relative: String, _ times: [timespec]) throws {
        try check(utimensat(fd, relative, times, AT_SYMLINK_NOFOLLOW))
    }

    /// chmod (Linux cannot change the mode of a link itself; the kernel never asks that).
    func setMode(_ relative: String, _ mode: mode_t) throws { try check(fchmodat(fd, relative, mode, 0)) }

    func setOwner(_ relative: String, user: uid_t, group: gid_t) throws {
        try check(fchownat(fd, relative, user, group, AT_SYMLINK_NOFOLLOW))
    }

    func makeSymlink(_ relative: String, target: String) throws { try check(symlinkat(target, fd, relative)) }

    func readSymlink(_ relative: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = try check(readlinkat(fd, relative, &buffer, buffer.count - 1))
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the caller (this process) may do `mode` (W_OK | X_OK ...) on a path.
    func access(_ relative: String, _ mode: Int32) throws { try check(faccessat(fd, relative, mode, AT_EACCESS)) }

    func statistics() throws -> statvfs {
        var stats = statvfs()
        try check(fstatvfs(fd, &stats))
        return stats
    }
}

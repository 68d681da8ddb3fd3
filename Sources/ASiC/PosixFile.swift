import CLinux
import Foundation

/// An open file descriptor with positional I/O. Owns the descriptor and closes it in deinit,
/// so the rest of the core never handles raw descriptors. Positional calls (pread/pwrite)
/// make it safe to share between threads.
public final class PosixFile: @unchecked Sendable {
    public let path: String
    public let fd: Int32

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit { close(fd) }

    /// Opens an existing regular file for reading. O_NONBLOCK keeps a FIFO from hanging the open;
    /// anything but a regular file is refused.
    public static func openForReading(_ path: String) throws -> PosixFile {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw ContainerError.io(path: path, operation: "cannot open", errno: errno) }
        let file = PosixFile(path: path, fd: fd)
        let type = try file.status().st_mode & S_IFMT
        if type == S_IFDIR { throw ContainerError.io(path: path, operation: "cannot open", errno: EISDIR) }
        if type != S_IFREG { throw ContainerError.notRegularFile(path) }
        return file
    }

    /// Creates a new file that must not exist yet (O_EXCL), readable and writable.
    public static func createExclusive(_ path: String, mode: mode_t = 0o600) throws -> PosixFile {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw ContainerError.io(path: path, operation: "cannot create", errno: errno) }
        return PosixFile(path: path, fd: fd)
    }

    /// Creates the new file `name` inside the folder open as `folder` (a descriptor: the folder's
    /// path is not looked up again, so a folder renamed or replaced meanwhile changes nothing),
    /// never following a symlink. `path` names it in messages.
    public static func createExclusive(named name: String, in folder: Int32, path: String, mode: mode_t = 0o600) throws -> PosixFile {
        let fd = openat(folder, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw ContainerError.io(path: path, operation: "cannot create", errno: errno) }
        return PosixFile(path: path, fd: fd)
    }

    public func size() throws -> Int64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ContainerError.io(path: path, operation: "cannot stat", errno: errno) }
        return Int64(st.st_size)
    }

    public func status() throws -> stat {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ContainerError.io(path: path, operation: "cannot stat", errno: errno) }
        return st
    }

    /// Reads into `buffer` from `offset` until it is full or the file ends; returns the byte count.
    private func readUpTo(_ buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw ContainerError.io(path: path, operation: "cannot read", errno: errno)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Reads exactly `count` bytes at `offset` into `buffer`; a short file is a corrupt-ZIP error.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws {
        if try readUpTo(buffer, at: offset) < buffer.count {
            throw ContainerError.corruptZip("the file ends early (truncated?)")
        }
    }

    /// Reads up to `count` bytes at `offset`; returns fewer only at the end of the file.
    public func read(count: Int, at offset: Int64) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { try readUpTo($0, at: offset) }
        if got < count { bytes.removeSubrange(got...) }
        return bytes
    }

    /// Writes all of `buffer` at `offset`.
    public func write(_ buffer: UnsafeRawBufferPointer, at offset: Int64) throws {
        var done = 0
        while done < buffer.count {
            let n = pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw ContainerError.io(path: path, operation: "cannot write", errno: errno)
            }
            done += n
        }
    }

    public func write(_ bytes: [UInt8], at offset: Int64) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }

    public func truncate(to length: Int64) throws {
        guard ftruncate(fd, off_t(length)) == 0 else {
            throw ContainerError.io(path: path, operation: "cannot truncate", errno: errno)
        }
    }

    public func sync() throws {
        guard fsync(fd) == 0 else { throw ContainerError.io(path: path, operation: "cannot sync", errno: errno) }
    }

    /// Copies `length` bytes from `source` at `sourceOffset` to this file at `offset`, in the kernel
    /// where it can (copy_file_range), else through a buffer.
    public func copy(from source: PosixFile, sourceOffset: Int64, length: Int64, to offset: Int64) throws {
        var inOff = off_t(sourceOffset)
        var outOff = off_t(offset)
        var left = length
        while left > 0 {
            let chunk = Int(min(left, 1 << 30))
            let n = clinux_copy_file_range(source.fd, &inOff, fd, &outOff, chunk)
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL {
                    try copyThroughBuffer(from: source, sourceOffset: Int64(inOff), length: left, to: Int64(outOff))
                    return
                }
                throw ContainerError.io(path: path, operation: "cannot write", errno: errno)
            }
            if n == 0 { throw ContainerError.corruptZip("the file ends early (truncated?)") }
            left -= Int64(n)
        }
    }

    private func copyThroughBuffer(from source: PosixFile, sourceOffset: Int64, length: Int64, to offset: Int64) throws {
        let bufferSize = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        var done: Int64 = 0
        while done < length {
            let n = Int(min(Int64(bufferSize), length - done))
            let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<n])
            try source.read(into: slice, at: sourceOffset + done)
            try write(UnsafeRawBufferPointer(slice), at: offset + done)
            done += Int64(n)
        }
    }

    /// Makes this file share the other file's blocks (reflink) where the filesystem can
    /// (btrfs, XFS); returns false where it cannot, so the caller copies instead.
    public func cloneContents(of source: PosixFile) -> Bool {
        clinux_ficlone(fd, source.fd) == 0
    }
}

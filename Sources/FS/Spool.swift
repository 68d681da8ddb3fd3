import ASiC
import Foundation

/// A data file being written through the mount. Its bytes live in a private file on the
/// container's own filesystem (so a full disk shows up as ENOSPC on `write`, and nothing big
/// is ever held in memory) until a commit moves them into the container.
final class Spool: @unchecked Sendable {
    let path: String
    let file: PosixFile
    private(set) var size: Int64
    var modified: Date
    /// Open handles that may write (a spool with writers is never committed half-written).
    var writers = 0
    /// Open handles of any kind; the spool file is deleted when this drops to 0 and it is not in the view.
    var opened = 0
    /// Bumped by every change, so a commit can tell whether it saved the latest bytes.
    var generation: UInt64 = 0
    /// A write failed (disk full, I/O error): the bytes are incomplete and must not be committed.
    var failed: Error?

    init(path: String, size: Int64 = 0, modified: Date = Date()) throws {
        self.path = path
        file = try PosixFile.createExclusive(path)
        self.size = size
        self.modified = modified
    }

    deinit { unlink(path) }

    func write(_ buffer: UnsafeRawBufferPointer, at offset: Int64) throws {
        do {
            try file.write(buffer, at: offset)
        } catch {
            failed = error
            throw error
        }
        size = max(size, offset + Int64(buffer.count))
        modified = Date()
        generation += 1
    }

    func truncate(to length: Int64) throws {
        try file.truncate(to: length)
        size = length
        modified = Date()
        generation += 1
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let count = Int(max(0, min(Int64(buffer.count), size - offset)))
        if count == 0 { return 0 }
        let n = pread(file.fd, buffer.baseAddress, count, off_t(offset))
        if n < 0 { throw ContainerError.io(path: path, operation: "cannot read", errno: errno) }
        return n
    }
}

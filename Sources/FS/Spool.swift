import ASiC
import Foundation

/// A data file being written through the mount. Small files (up to `memoryLimit`) stay in
/// memory, which spares the filesystem an inode per file when many small files are copied in;
/// larger ones live in a private file on the container's own filesystem (so a full disk shows
/// up as ENOSPC on `write`, and nothing big is ever held in memory) until a commit moves the
/// bytes into the container. That file is made in the mount's `SpoolFolder`, and everything
/// reads it through the descriptor that wrote it, never by its path.
///
/// Locking, a lock per spool: `ioLock` guards the bytes (memory, file) and is held for the I/O
/// of one read or write; `stateLock` guards the size, time, generation and failure and is held
/// only to read or set them (never across I/O), so a listing, a stat or a save planning around
/// a file being written never waits for that write. Neither is held while taking another lock
/// but `ioLock` -> `stateLock`. The handle counts (`writers`, `opened`, `uncachedHandles`,
/// `removed`) are guarded by the view's lock in `DataFiles`, which may take these inside its own.
final class Spool: @unchecked Sendable {
    static let memoryLimit = 64 << 10

    private let folder: SpoolFolder
    /// The spool file's name in `folder`, once there is one.
    private var fileName: String?
    private var memory: [UInt8]? = []
    private var file: PosixFile?
    let ioLock = NSLock()
    private let stateLock = NSLock()
    private var storedSize: Int64 = 0
    private var storedModified: Date
    private var storedGeneration: UInt64 = 0
    private var storedFailure: Error?
    var size: Int64 { stateLock.withLock { storedSize } }
    var modified: Date {
        get { stateLock.withLock { storedModified } }
        set { stateLock.withLock { storedModified = newValue } }
    }
    /// Open handles that may write (a spool with writers is never committed half-written).
    var writers = 0
    /// Open handles of any kind.
    var opened = 0
    /// Bumped by every change, so a commit can tell whether it saved the latest bytes.
    var generation: UInt64 { stateLock.withLock { storedGeneration } }
    /// Open handles that bypass the page cache (`DataFiles.openSpool`).
    var uncachedHandles = 0
    /// Removed from the view while open: writes through the open handles change nothing to save.
    var removed = false
    /// A write failed (disk full, I/O error): the bytes are incomplete and must not be committed.
    var failed: Error? { stateLock.withLock { storedFailure } }
    /// The bytes' digest, computed in the background while they arrive in order.
    let digest = SpoolDigest()

    init(in folder: SpoolFolder, modified: Date = Date()) {
        self.folder = folder
        storedModified = modified
    }

    /// A new time (touch): a change a commit must save.
    func setModified(_ date: Date) {
        stateLock.withLock {
            storedModified = date
            storedGeneration += 1
        }
    }

    /// Written again from the start (O_TRUNC): an earlier failed write no longer matters.
    func clearFailure() { stateLock.withLock { storedFailure = nil } }

    deinit { if let fileName { folder.removeFile(fileName) } }

    /// True when the bytes are in the spool file, not in memory.
    var isOnDisk: Bool { ioLock.withLock { file != nil } }

    /// A name for messages.
    private var label: String { fileName.map { "\(folder.path)/\($0)" } ?? folder.path }

    /// Where a commit takes the bytes from: memory, or the open spool file.
    var source: NewDataFile { ioLock.withLock { unlockedSource } }

    private var unlockedSource: NewDataFile {
        if let memory { return NewDataFile(bytes: memory, name: label) }
        var source = NewDataFile(sourcePath: label)
        source.openFile = file
        source.digest = digest
        return source
    }

    /// Moves the spool file out to `target` (a rescue at unmount); false when it could not.
    func moveFile(to target: String) -> Bool { ioLock.withLock { unlockedMoveFile(to: target) } }

    private func unlockedMoveFile(to target: String) -> Bool {
        guard let fileName, folder.moveFile(fileName, to: target) else { return false }
        self.fileName = nil
        return true
    }

    /// Moves the bytes from memory into the spool file.
    private func spill() throws {
        guard let memory else { return }
        let (name, created) = try folder.createFile()
        fileName = name
        try memory.withUnsafeBytes { try created.write($0, at: 0) }
        file = created
        self.memory = nil
        digest.spilled(to: created)
    }

    func write(_ buffer: UnsafeRawBufferPointer, at offset: Int64) throws {
        try ioLock.withLock { try unlockedWrite(buffer, at: offset) }
    }

    private func unlockedWrite(_ buffer: UnsafeRawBufferPointer, at offset: Int64) throws {
        do {
            let end = offset + Int64(buffer.count)
            if memory != nil, end > Int64(Self.memoryLimit) { try spill() }
            if memory != nil {
                if memory!.count < Int(end) { memory!.append(contentsOf: repeatElement(0, count: Int(end) - memory!.count)) }
                memory!.withUnsafeMutableBytes { target in
                    UnsafeMutableRawBufferPointer(rebasing: target[Int(offset)..<Int(end)]).copyMemory(from: buffer)
                }
            } else {
                try file!.write(buffer, at: offset)
            }
        } catch {
            stateLock.withLock { storedFailure = error }
            digest.giveUp()
            throw error
        }
        digest.wrote(at: offset, count: buffer.count)
        stateLock.withLock {
            storedSize = max(storedSize, offset + Int64(buffer.count))
            storedModified = Date()
            storedGeneration += 1
        }
    }

    func truncate(to length: Int64) throws {
        try ioLock.withLock { try unlockedTruncate(to: length) }
    }

    private func unlockedTruncate(to length: Int64) throws {
        digest.truncated(to: length)
        if memory != nil, length > Int64(Self.memoryLimit) { try spill() }
        if memory != nil {
            if memory!.count > Int(length) { memory!.removeSubrange(Int(length)...) } else {
                memory!.append(contentsOf: repeatElement(0, count: Int(length) - memory!.count))
            }
        } else {
            try file!.truncate(to: length)
        }
        stateLock.withLock {
            storedSize = length
            storedModified = Date()
            storedGeneration += 1
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try ioLock.withLock { try unlockedRead(into: buffer, at: offset) }
    }

    private func unlockedRead(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let count = Int(max(0, min(Int64(buffer.count), size - offset)))
        if count == 0 { return 0 }
        if let memory {
            memory.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + count])) }
            return count
        }
        let n = pread(file!.fd, buffer.baseAddress, count, off_t(offset))
        if n < 0 { throw ContainerError.io(path: label, operation: "cannot read", errno: errno) }
        return n
    }
}

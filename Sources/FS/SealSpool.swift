import ASiC
import CDOC
import Crypto
import Foundation

/// The files copied into a folder that is to be sealed (`SealingMount`): spool files, each
/// ENCRYPTED with AES-256-CTR under a key that exists only in this process's memory, as the
/// `EncryptedSpool` keeps decrypted files. Counter mode lets any byte range be written or read
/// alone, so `cp`, editors and `truncate` work, and only one buffer is ever in the clear.
final class SealSpool: @unchecked Sendable {
    final class File {
        fileprivate let spoolName: String
        fileprivate let file: PosixFile
        fileprivate let nonce: [UInt8]
        fileprivate(set) var size: Int64 = 0
        fileprivate init(spoolName: String, file: PosixFile, nonce: [UInt8]) {
            self.spoolName = spoolName
            self.file = file
            self.nonce = nonce
        }
    }

    private let containerPath: String
    private let lock = NSLock()
    private var cipher: CounterModeCipher?
    private var folder: SpoolFolder?
    /// In the order the files were made (the order they are sealed in).
    private var entries: [(name: String, file: File)] = []

    init(containerPath: String) throws {
        self.containerPath = containerPath
        cipher = try CounterModeCipher(key: try SecureRandom.secret(CounterModeCipher.keySize))
    }

    var names: [String] { lock.withLock { entries.map(\.name) } }
    var files: [(name: String, file: File)] { lock.withLock { entries } }

    func file(named name: String) -> File? { lock.withLock { entries.first { $0.name == name }?.file } }

    /// A new empty file `name` (one of that name is replaced).
    func create(_ name: String) throws -> File {
        try lock.withLock {
            guard cipher != nil else { throw FileSystemError(ESHUTDOWN, "the mount is going away") }
            if folder == nil { folder = try EncryptedSpool.makeFolder(forContainer: containerPath) }
            let (spoolName, posix) = try folder!.createFile()
            let file = File(spoolName: spoolName, file: posix, nonce: try SecureRandom.bytes(CounterModeCipher.nonceSize))
            if let index = entries.firstIndex(where: { $0.name == name }) {
                folder!.removeFile(entries[index].file.spoolName)
                entries[index].file = file
            } else {
                entries.append((name, file))
            }
            return file
        }
    }

    func write(_ file: File, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        guard bytes.count > 0 else { return }
        guard let cipher = lock.withLock({ self.cipher }) else { throw FileSystemError(ESHUTDOWN) }
        // A gap before `offset` must read back as zeros: encrypted zeros are written into it.
        let size = lock.withLock { file.size }
        if offset > size { try writeZeros(file, cipher, from: size, to: offset) }
        try writeEncrypted(file, cipher, bytes, at: offset)
    }

    private func writeEncrypted(_ file: File, _ cipher: CounterModeCipher, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        try cipher.sealedCopy(of: bytes, nonce: file.nonce, at: offset) { try file.file.write($0, at: offset) }
        lock.withLock { file.size = max(file.size, offset + Int64(bytes.count)) }
    }

    private func writeZeros(_ file: File, _ cipher: CounterModeCipher, from start: Int64, to end: Int64) throws {
        let zeros = [UInt8](repeating: 0, count: 1 << 16)
        var position = start
        while position < end {
            let count = Int(min(Int64(zeros.count), end - position))
            try zeros.withUnsafeBytes { try writeEncrypted(file, cipher, UnsafeRawBufferPointer(rebasing: $0[..<count]), at: position) }
            position += Int64(count)
        }
    }

    func truncate(_ file: File, to length: Int64) throws {
        guard let cipher = lock.withLock({ self.cipher }) else { throw FileSystemError(ESHUTDOWN) }
        let size = lock.withLock { file.size }
        if length > size { return try writeZeros(file, cipher, from: size, to: length) }
        try file.file.truncate(to: length)
        lock.withLock { file.size = length }
    }

    /// Decrypts `buffer.count` bytes (fewer at the end) of `file` from `offset`.
    func read(_ file: File, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        guard let cipher = lock.withLock({ self.cipher }) else { throw FileSystemError(EIO) }
        let size = lock.withLock { file.size }
        guard offset < size else { return 0 }
        let count = Int(min(Int64(buffer.count), size - offset))
        let part = UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])
        try file.file.read(into: part, at: offset)
        try cipher.apply(part, nonce: file.nonce, at: offset)
        return count
    }

    func remove(_ name: String) throws {
        try lock.withLock {
            guard let index = entries.firstIndex(where: { $0.name == name }) else { throw FileSystemError(ENOENT) }
            folder?.removeFile(entries.remove(at: index).file.spoolName)
        }
    }

    func rename(_ from: String, to: String) throws {
        try lock.withLock {
            guard let index = entries.firstIndex(where: { $0.name == from }) else { throw FileSystemError(ENOENT) }
            if from == to { return }
            if let other = entries.firstIndex(where: { $0.name == to }) { folder?.removeFile(entries[other].file.spoolName) }
            entries[index].name = to
            entries.removeAll { $0.name == to && $0.file !== entries[index].file }
        }
    }

    /// Unmount: the key is dropped and every spool file removed, with their folder.
    func discard() {
        let folder = lock.withLock { () -> SpoolFolder? in
            cipher = nil
            entries = []
            defer { self.folder = nil }
            return self.folder
        }
        folder?.removeAll()
    }

    /// One file read front to back for the writer.
    final class Source: PlainFileSource {
        let name: String
        let size: Int64
        private let spool: SealSpool
        private let file: File
        private var position: Int64 = 0
        init(spool: SealSpool, name: String, file: File) {
            self.spool = spool
            self.name = name
            self.file = file
            size = spool.lock.withLock { file.size }
        }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            let limited = UnsafeMutableRawBufferPointer(rebasing: buffer[..<Int(min(Int64(buffer.count), size - position))])
            let count = try spool.read(file, into: limited, at: position)
            position += Int64(count)
            return count
        }
    }
}

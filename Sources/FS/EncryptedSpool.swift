import ASiC
import CDOC
import Crypto
import Foundation

/// Where an encrypted container's decrypted files live while it is mounted: spool files in a
/// private folder beside the container (`SpoolFolder`; see `makeFolder`), each ENCRYPTED with AES-256-CTR under a
/// key made for this mount that exists only in this process's memory, so plaintext never reaches
/// persistent storage, and any byte range can be read back without the rest. Memory stays bounded
/// whatever the files' size: only the buffer of one write or read is ever in the clear.
///
/// A `PlainFileSink`: a decryption's files appear (`files`) only once it has succeeded
/// (`publish`); a failed one is abandoned and its spool files removed. `discard()` (unmount)
/// drops the key and removes every spool file; writes after it fail, so a decryption still
/// running ends.
final class EncryptedSpool: PlainFileSink, @unchecked Sendable {
    struct File {
        let name: String
        let size: Int64
        fileprivate let spoolName: String
        fileprivate let file: PosixFile
        fileprivate let nonce: [UInt8]
    }

    private let containerPath: String
    private let lock = NSLock()
    private var cipher: CounterModeCipher?
    private var folder: SpoolFolder?
    private var published: [File] = []
    /// The decryption being received: files ended, and the one being written.
    private var pending: [File] = []
    private var current: (name: String, spoolName: String, file: PosixFile, nonce: [UInt8], size: Int64)?

    init(containerPath: String) throws {
        self.containerPath = containerPath
        cipher = try CounterModeCipher(key: try SecureRandom.secret(CounterModeCipher.keySize))
    }

    /// The decrypted files, in the container's order; empty before decryption.
    var files: [File] { lock.withLock { published } }

    func file(named name: String) -> File? { lock.withLock { published.first { $0.name == name } } }

    // MARK: - PlainFileSink

    func begin(name: String, size: Int64?) throws {
        try lock.withLock {
            guard cipher != nil else { throw FileSystemError(ESHUTDOWN, "the mount is going away") }
            if pending.contains(where: { $0.name == name }) || current?.name == name {
                throw FileSystemError(EINVAL, "the container holds two files named \(PrintableText.escaped(name))")
            }
            if folder == nil { folder = try Self.makeFolder(forContainer: containerPath) }
            let (spoolName, file) = try folder!.createFile()
            current = (name, spoolName, file, try SecureRandom.bytes(CounterModeCipher.nonceSize), 0)
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count > 0 else { return }
        let (cipher, target) = try lock.withLock { () -> (CounterModeCipher, (file: PosixFile, nonce: [UInt8], size: Int64)) in
            guard let cipher = self.cipher, let current else { throw FileSystemError(ESHUTDOWN, "the mount is going away") }
            return (cipher, (current.file, current.nonce, current.size))
        }
        try cipher.sealedCopy(of: bytes, nonce: target.nonce, at: target.size) { try target.file.write($0, at: target.size) }
        lock.withLock { current?.size += Int64(bytes.count) }
    }

    func end() throws {
        lock.withLock {
            guard let done = current else { return }
            pending.append(File(name: done.name, size: done.size, spoolName: done.spoolName, file: done.file, nonce: done.nonce))
            current = nil
        }
    }

    func abandon() {
        let dropped = lock.withLock { () -> [String] in
            let names = pending.map(\.spoolName) + (current.map { [$0.spoolName] } ?? [])
            pending = []
            current = nil
            return names
        }
        for name in dropped { folder?.removeFile(name) }
    }

    /// The decryption succeeded: its files appear.
    func publish() {
        lock.withLock {
            published = pending
            pending = []
        }
    }

    /// Beside the container, on its disk (the runtime folder may be a small tmpfs); where that
    /// folder cannot be written (read-only storage), in the daemon's private folder.
    static func makeFolder(forContainer container: String) throws -> SpoolFolder {
        if access(PathText.folder(of: container), W_OK) == 0 { return try SpoolFolder.make(forContainer: container) }
        let own = try PrivateFolder.ensure(MountRegistry.folder)
        return try SpoolFolder.make(forContainer: own + "/" + PathText.lastComponent(of: container))
    }

    // MARK: - Reading back

    /// Decrypts `buffer.count` bytes (fewer at the end) of `file` from `offset`.
    func read(_ file: File, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        guard let cipher = lock.withLock({ self.cipher }) else { throw FileSystemError(EIO) }
        guard offset < file.size else { return 0 }
        let count = Int(min(Int64(buffer.count), file.size - offset))
        let part = UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])
        try file.file.read(into: part, at: offset)
        try cipher.apply(part, nonce: file.nonce, at: offset)
        return count
    }

    /// Unmount: the key is dropped (wiped) and every spool file removed, with their folder.
    func discard() {
        let folder = lock.withLock { () -> SpoolFolder? in
            cipher = nil
            published = []
            pending = []
            current = nil
            defer { self.folder = nil }
            return self.folder
        }
        folder?.removeAll()
    }
}

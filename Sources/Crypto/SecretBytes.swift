import Glibc

/// A PIN or passphrase in memory: never printed, wiped when dropped. Keep it no longer than the
/// operation that needs it; `wipe()` may be called earlier.
public final class SecretBytes: @unchecked Sendable, CustomStringConvertible {
    private var storage: [UInt8]

    public init(_ bytes: [UInt8]) { storage = bytes }

    /// Reads a passphrase file (the first line, without its newline) without keeping other copies.
    public static func read(file path: String) throws -> SecretBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CryptoError("cannot read the passphrase file \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        // A folder opens, and reading it fails: that must not pass for an empty passphrase.
        var status = stat()
        if fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw CryptoError("cannot read the passphrase file \(path): it is a folder")
        }
        var bytes = [UInt8](repeating: 0, count: 4096)
        var used = 0
        while used < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + used, $0.count - used) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                let code = errno
                Self.zero(&bytes)
                throw CryptoError("cannot read the passphrase file \(path): \(String(cString: strerror(code)))")
            }
            guard n > 0 else { break }
            used += n
        }
        var end = bytes[..<used].firstIndex(of: 0x0A) ?? used
        if end > 0 && bytes[end - 1] == 0x0D { end -= 1 }
        let secret = SecretBytes(Array(bytes[..<end]))
        Self.zero(&bytes)
        return secret
    }

    /// Gives the bytes NUL-terminated to C code for the length of the closure.
    public func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        var terminated = storage + [0]
        defer { Self.zero(&terminated) }
        return try terminated.withUnsafeBufferPointer {
            try $0.baseAddress!.withMemoryRebound(to: CChar.self, capacity: $0.count, body)
        }
    }

    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes(body)
    }

    public var isEmpty: Bool { storage.isEmpty }
    public var count: Int { storage.count }

    public func wipe() {
        Self.zero(&storage)
        storage = []
    }

    deinit { wipe() }

    /// explicit_bzero: a memset the compiler may not drop. For the short-lived copies of a secret
    /// (a digest of it, a decrypted block) that must exist as plain arrays for a moment.
    public static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
    }

    public var description: String { "<secret>" }
}

import Crypto
import Glibc

/// `pin-fd=N`: one line read from an open descriptor, the way `gpg --passphrase-fd` takes it.
/// Bytes are read one at a time so that several secrets can share one descriptor (one line
/// each), and nothing is read beyond the line end.
enum DescriptorSecret {
    static func read(_ fd: Int32, what: String) throws -> SecretBytes {
        // A fixed buffer: growing an array would leave copies of the secret in freed memory.
        var buffer = [UInt8](repeating: 0, count: 1024)
        defer { buffer.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } } }
        var used = 0
        var sawAny = false
        var byte: UInt8 = 0
        defer { byte = 0 }
        while used < buffer.count {
            let n = Glibc.read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                throw SecretEntryError.unavailable("cannot read the \(what) from descriptor \(fd): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            sawAny = true
            if byte == 0x0A { break }
            buffer[used] = byte
            used += 1
        }
        guard sawAny else { throw SecretEntryError.unavailable("descriptor \(fd) gave no \(what) (it is at its end)") }
        if used > 0, buffer[used - 1] == 0x0D { used -= 1 }
        return SecretBytes(Array(buffer[..<used]))
    }
}

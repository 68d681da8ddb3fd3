import Glibc
import COpenSSL

/// AES-256-CTR with random access: the bytes at any offset of a stream are encrypted (or
/// decrypted: the same operation) without touching the bytes before them, so a spool file can be
/// read back from any offset. Each stream has its own 8-byte nonce; the counter block is the nonce
/// followed by the big-endian number of the 16-byte block, so a stream never reuses a counter.
/// For data that must not reach the disk readable but needs no integrity: the key never leaves
/// memory, so no one who could change the file can read or forge it meaningfully.
public final class CounterModeCipher: @unchecked Sendable {
    public static let keySize = 32, nonceSize = 8
    private let key: SecretBytes

    public init(key: SecretBytes) throws {
        guard key.count == Self.keySize else { throw CryptoError("AES-256-CTR takes a 32-byte key, not \(key.count)") }
        self.key = key
    }

    /// XORs `buffer`, in place, with the key stream of `nonce` at byte `offset`.
    public func apply(_ buffer: UnsafeMutableRawBufferPointer, nonce: [UInt8], at offset: Int64) throws {
        guard nonce.count == Self.nonceSize, offset >= 0 else { throw CryptoError("AES-256-CTR: a nonce of 8 bytes and an offset from 0") }
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        var counter = nonce
        let block = UInt64(offset) / 16
        for shift in stride(from: 56, through: 0, by: -8) { counter.append(UInt8(truncatingIfNeeded: block >> UInt64(shift))) }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError("out of memory") }
        defer { EVP_CIPHER_CTX_free(context) }
        let ok = key.withBytes { keyBytes in
            EVP_EncryptInit_ex(context, EVP_aes_256_ctr(), nil, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), counter)
        }
        guard ok == 1 else { throw CryptoError("AES-256-CTR setup failed: \(OpenSSLError.last())") }
        var written: Int32 = 0
        // Into the block: the key stream's first bytes belong to the bytes before `offset`.
        let skip = Int32(offset % 16)
        if skip > 0 {
            let zeros = [UInt8](repeating: 0, count: 16)
            var scratch = zeros
            guard EVP_EncryptUpdate(context, &scratch, &written, zeros, skip) == 1 else {
                throw CryptoError("AES-256-CTR failed: \(OpenSSLError.last())")
            }
        }
        var done = 0
        while done < buffer.count {
            let count = Int32(min(buffer.count - done, 1 << 30))
            let pointer = (base + done).assumingMemoryBound(to: UInt8.self)
            guard EVP_EncryptUpdate(context, pointer, &written, pointer, count) == 1 else {
                throw CryptoError("AES-256-CTR failed: \(OpenSSLError.last())")
            }
            done += Int(count)
        }
    }

    /// Hands `body` an encrypted copy of `bytes` (at byte `offset` of the stream of `nonce`), in a
    /// buffer of its own that is wiped afterwards: the caller's bytes stay as they were. What a
    /// spool writes to disk.
    public func sealedCopy<T>(of bytes: UnsafeRawBufferPointer, nonce: [UInt8], at offset: Int64,
                              _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        let sealed = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        defer {
            memset(sealed.baseAddress!, 0, sealed.count)
            sealed.deallocate()
        }
        let part = UnsafeMutableRawBufferPointer(rebasing: sealed[..<bytes.count])
        part.copyMemory(from: bytes)
        try apply(part, nonce: nonce, at: offset)
        return try body(UnsafeRawBufferPointer(part))
    }
}

import CISAL
import CZlib

/// CRC-32 as ZIP uses it (the reflected IEEE polynomial, gzip's). ISA-L computes it
/// (`crc32_gzip_refl`, about three times zlib's speed); ISA-L has no way to join the CRCs of
/// two adjacent pieces, so `combine` is zlib's `crc32_combine`.
enum CRC32 {
    /// The CRC of `crc`'s bytes followed by `buffer`.
    static func update(_ crc: UInt32, _ buffer: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return crc }
        return crc32_gzip_refl(crc, base.assumingMemoryBound(to: UInt8.self), UInt64(buffer.count))
    }

    static func of(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { update(0, $0) }
    }

    /// The CRC of A followed by B, from CRC(A), CRC(B) and B's length.
    static func combine(_ first: UInt32, _ second: UInt32, secondLength: Int64) -> UInt32 {
        UInt32(truncatingIfNeeded: crc32_combine(uLong(first), uLong(second), Int(secondLength)))
    }
}

func crc32Update(_ crc: UInt32, _ buffer: UnsafeRawBufferPointer) -> UInt32 { CRC32.update(crc, buffer) }

func crc32Of(_ bytes: [UInt8]) -> UInt32 { CRC32.of(bytes) }

import Crypto

/// The CRC-32 and SHA-256 of a data file's bytes, computed before a save needs them.
public struct ContentDigest: Sendable, Equatable {
    public let size: Int64
    public let crc32: UInt32
    public let sha256: [UInt8]

    public init(size: Int64, crc32: UInt32, sha256: [UInt8]) {
        self.size = size
        self.crc32 = crc32
        self.sha256 = sha256
    }
}

/// Something that may know the digest of a new data file's source by the time it is saved (a
/// file written into a mount, hashed as it arrived). nil: not known, the save hashes it.
public protocol ContentDigestSource: AnyObject, Sendable {
    func digest(ofSize size: Int64) -> ContentDigest?
}

/// CRC-32 and SHA-256 of bytes given in order, as a save would compute them.
public final class RunningContentDigest: @unchecked Sendable {
    private let hasher = Hasher(.sha256)
    private var crc: UInt32 = 0
    public private(set) var size: Int64 = 0

    public init() {}

    public func update(_ bytes: UnsafeRawBufferPointer) {
        crc = CRC32.update(crc, bytes)
        hasher.update(bytes)
        size += Int64(bytes.count)
    }

    /// The digest of everything given (call once).
    public func finish() -> ContentDigest { ContentDigest(size: size, crc32: crc, sha256: hasher.finish()) }
}

import COpenSSL

/// The hash functions XAdES names. SHA-1 is read (old signatures) but never chosen for new ones.
public enum DigestAlgorithm: String, Sendable, CaseIterable {
    case sha1 = "SHA-1", sha224 = "SHA-224", sha256 = "SHA-256", sha384 = "SHA-384", sha512 = "SHA-512"
    case sha3_224 = "SHA3-224", sha3_256 = "SHA3-256", sha3_384 = "SHA3-384", sha3_512 = "SHA3-512"

    /// OpenSSL's implementation (a static object: never freed).
    var md: OpaquePointer {
        let md: OpaquePointer? = switch self {
        case .sha1: EVP_sha1()
        case .sha224: EVP_sha224()
        case .sha256: EVP_sha256()
        case .sha384: EVP_sha384()
        case .sha512: EVP_sha512()
        case .sha3_224: EVP_sha3_224()
        case .sha3_256: EVP_sha3_256()
        case .sha3_384: EVP_sha3_384()
        case .sha3_512: EVP_sha3_512()
        }
        return md!
    }

    public var length: Int { Int(EVP_MD_get_size(md)) }
    /// Weak for signatures today: validation warns about it.
    public var isWeak: Bool { self == .sha1 }

    /// The algorithm OpenSSL calls by this NID (e.g. a time-stamp's message imprint), if XAdES knows it.
    public init?(nid: Int32) {
        guard let match = Self.allCases.first(where: { EVP_MD_get_type($0.md) == nid }) else { return nil }
        self = match
    }

    public var nid: Int32 { EVP_MD_get_type(md) }

    /// The DER DigestInfo prefix that RSA PKCS#1 v1.5 puts before the hash (RFC 8017 §9.2).
    public var digestInfoPrefix: [UInt8]? {
        switch self {
        case .sha1: [0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14]
        case .sha224: [0x30, 0x2d, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x04, 0x05, 0x00, 0x04, 0x1c]
        case .sha256: [0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20]
        case .sha384: [0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04, 0x30]
        case .sha512: [0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40]
        default: nil
        }
    }
}

/// An incremental hash: feed bytes as they stream out of the container, then `finish()`.
public final class Hasher: @unchecked Sendable {
    private let context: OpaquePointer
    public let algorithm: DigestAlgorithm

    public init(_ algorithm: DigestAlgorithm) {
        self.algorithm = algorithm
        context = EVP_MD_CTX_new()!
        EVP_DigestInit_ex(context, algorithm.md, nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    public func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    public func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &out, &length)
        return Array(out.prefix(Int(length)))
    }
}

public enum Digest {
    public static func hash(_ bytes: [UInt8], _ algorithm: DigestAlgorithm = .sha256) -> [UInt8] {
        let hasher = Hasher(algorithm)
        hasher.update(bytes)
        return hasher.finish()
    }

    public static func hash(_ bytes: UnsafeRawBufferPointer, _ algorithm: DigestAlgorithm = .sha256) -> [UInt8] {
        let hasher = Hasher(algorithm)
        hasher.update(bytes)
        return hasher.finish()
    }
}

extension Array where Element == UInt8 {
    /// Lower-case hex, for fingerprints and messages.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for byte in self { out += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return String(decoding: out, as: UTF8.self)
    }
}

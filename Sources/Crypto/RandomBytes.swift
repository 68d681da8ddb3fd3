import COpenSSL

/// Fresh random bytes from OpenSSL's DRBG: keys, IVs.
public enum RandomBytes {
    public static func make(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard count == 0 || RAND_bytes(&bytes, Int32(count)) == 1 else { throw CryptoError("no random bytes: \(OpenSSLError.last())") }
        return bytes
    }

    /// A new secret key of `count` bytes.
    public static func key(_ count: Int) throws -> SecretBytes {
        var bytes = try make(count)
        defer { SecretBytes.zero(&bytes) }
        return SecretBytes(bytes)
    }
}

import COpenSSL

/// Random bytes from OpenSSL's DRBG: keys, IVs, salts, nonces.
public enum SecureRandom {
    public static func bytes(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard count == 0 || RAND_bytes(&bytes, Int32(count)) == 1 else { throw CryptoError("no random bytes: \(OpenSSLError.last())") }
        return bytes
    }

    /// A new secret key of `count` bytes; the working copy is wiped.
    public static func secret(_ count: Int) throws -> SecretBytes {
        var bytes = try bytes(count)
        defer { SecretBytes.zero(&bytes) }
        return SecretBytes(bytes)
    }
}

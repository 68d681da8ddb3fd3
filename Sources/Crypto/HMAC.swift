import COpenSSL

/// HMAC through OpenSSL's one-shot HMAC(): CDOC2's header MAC, the authCode of Smart-ID v3 device links.
public enum HMAC {
    /// HMAC of `data` under `key` with `digest` (e.g. SHA-256: 32 bytes).
    public static func mac(key: SecretBytes, _ data: [UInt8], _ digest: DigestAlgorithm = .sha256) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let done = key.withBytes { keyBytes in
            COpenSSL.HMAC(digest.md, keyBytes.baseAddress, Int32(keyBytes.count), data, data.count, &out, &length)
        }
        guard done != nil else { throw CryptoError("HMAC failed: \(OpenSSLError.last())") }
        return Array(out[..<Int(length)])
    }

    public static func sha256(key: SecretBytes, _ data: [UInt8]) throws -> [UInt8] { try mac(key: key, data, .sha256) }
}

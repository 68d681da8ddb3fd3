import COpenSSL

/// HMAC-SHA-256 through OpenSSL's EVP_MAC (CDOC2's header MAC).
public enum HMAC {
    public static func sha256(key: SecretBytes, _ data: [UInt8]) throws -> [UInt8] {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { throw CryptoError("OpenSSL has no HMAC: \(OpenSSLError.last())") }
        defer { EVP_MAC_free(mac) }
        guard let context = EVP_MAC_CTX_new(mac) else { throw CryptoError("out of memory") }
        defer { EVP_MAC_CTX_free(context) }
        let parameters = OpenSSLParameters()
        parameters.utf8(OSSL_MAC_PARAM_DIGEST, "SHA256")
        let initialized = parameters.with { list in
            key.withBytes { EVP_MAC_init(context, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count, list) }
        }
        guard initialized == 1, EVP_MAC_update(context, data, data.count) == 1 else {
            throw CryptoError("HMAC failed: \(OpenSSLError.last())")
        }
        var out = [UInt8](repeating: 0, count: 32)
        var length = 0
        guard EVP_MAC_final(context, &out, &length, out.count) == 1, length == 32 else {
            throw CryptoError("HMAC failed: \(OpenSSLError.last())")
        }
        return out
    }
}

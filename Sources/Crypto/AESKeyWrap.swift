import COpenSSL

/// RFC 3394 AES key wrap with the default IV (A6…A6): XML-ENC `kw-aes128/192/256`.
public enum AESKeyWrap {
    public static func wrap(kek: SecretBytes, _ key: SecretBytes) throws -> [UInt8] {
        try key.withBytes { try run(encrypt: true, kek: kek, Array($0.bindMemory(to: UInt8.self))) }
    }

    /// Unwraps; the integrity check fails (throws) for a wrong KEK or changed data.
    public static func unwrap(kek: SecretBytes, _ wrapped: [UInt8]) throws -> SecretBytes {
        guard wrapped.count >= 24, wrapped.count % 8 == 0 else {
            throw CryptoError("a wrapped key is a multiple of 8 bytes, at least 24, not \(wrapped.count)")
        }
        var plain = try run(encrypt: false, kek: kek, wrapped)
        defer { SecretBytes.zero(&plain) }
        return SecretBytes(plain)
    }

    private static func run(encrypt: Bool, kek: SecretBytes, _ input: [UInt8]) throws -> [UInt8] {
        let cipher: OpaquePointer? = switch kek.count {
        case 16: EVP_aes_128_wrap()
        case 24: EVP_aes_192_wrap()
        case 32: EVP_aes_256_wrap()
        default: nil
        }
        guard let cipher else { throw CryptoError("an AES key-wrap key is 16, 24 or 32 bytes, not \(kek.count)") }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError("out of memory") }
        defer { EVP_CIPHER_CTX_free(context) }
        EVP_CIPHER_CTX_set_flags(context, Int32(copenssl_cipher_ctx_wrap_allow()))
        let initialized = kek.withBytes { keyBytes in
            EVP_CipherInit_ex(context, cipher, nil, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, encrypt ? 1 : 0)
        }
        guard initialized == 1 else { throw CryptoError("AES key wrap setup failed: \(OpenSSLError.last())") }
        var out = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        var tail: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            EVP_CipherUpdate(context, buffer.baseAddress, &written, input, Int32(input.count)) > 0
                && EVP_CipherFinal_ex(context, buffer.baseAddress! + Int(written), &tail) == 1
        }
        guard ok else {
            SecretBytes.zero(&out)
            ERR_clear_error()
            throw CryptoError(encrypt ? "AES key wrap failed" : "the key does not unwrap (wrong key or changed data)")
        }
        let result = Array(out.prefix(Int(written + tail)))
        SecretBytes.zero(&out)
        return result
    }
}

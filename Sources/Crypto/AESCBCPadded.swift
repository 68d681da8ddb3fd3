import COpenSSL

/// AES-CBC with OpenSSL's standard PKCS#7 padding (what CDOC 1.0's payload cipher adds after its
/// own X9.23 padding). The block-only variant without padding is `AES.encryptCBC`.
public enum AESCBCPadded {
    public static func encrypt(key: SecretBytes, iv: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        try run(encrypt: true, key: key, iv: iv, data[...])
    }

    /// Decrypts and removes the PKCS#7 padding; a bad padding (wrong key, changed data) throws.
    public static func decrypt(key: SecretBytes, iv: [UInt8], _ data: ArraySlice<UInt8>) throws -> [UInt8] {
        guard data.count % AES.blockSize == 0, !data.isEmpty else {
            throw CryptoError("AES-CBC data is whole blocks, not \(data.count) bytes")
        }
        return try run(encrypt: false, key: key, iv: iv, data)
    }

    private static func run(encrypt: Bool, key: SecretBytes, iv: [UInt8], _ data: ArraySlice<UInt8>) throws -> [UInt8] {
        let cipher: OpaquePointer? = switch key.count {
        case 16: EVP_aes_128_cbc()
        case 24: EVP_aes_192_cbc()
        case 32: EVP_aes_256_cbc()
        default: nil
        }
        guard let cipher else { throw CryptoError("an AES key is 16, 24 or 32 bytes, not \(key.count)") }
        guard iv.count == AES.blockSize else { throw CryptoError("an AES-CBC IV is 16 bytes, not \(iv.count)") }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError("out of memory") }
        defer { EVP_CIPHER_CTX_free(context) }
        let initialized = key.withBytes { keyBytes in
            EVP_CipherInit_ex(context, cipher, nil, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), iv, encrypt ? 1 : 0)
        }
        guard initialized == 1 else { throw CryptoError("AES-CBC setup failed: \(OpenSSLError.last())") }
        var out = [UInt8](repeating: 0, count: data.count + AES.blockSize)
        var written: Int32 = 0
        var tail: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            data.withUnsafeBufferPointer { input in
                EVP_CipherUpdate(context, buffer.baseAddress, &written, input.baseAddress, Int32(input.count)) == 1
                    && EVP_CipherFinal_ex(context, buffer.baseAddress! + Int(written), &tail) == 1
            }
        }
        guard ok else {
            SecretBytes.zero(&out)
            ERR_clear_error()
            throw CryptoError("AES-CBC decryption failed (wrong key or changed data)")
        }
        out.removeSubrange(Int(written + tail)...)
        return out
    }
}

import COpenSSL

/// AES-GCM (128/192/256 by key length) with a 12-byte IV and a 16-byte tag, no AAD: CDOC 1.1's payload.
public enum AESGCM {
    public static let ivLength = 12
    public static let tagLength = 16

    /// Encrypts `plaintext`: the ciphertext (same length) and the tag.
    public static func seal(key: SecretBytes, iv: [UInt8], _ plaintext: [UInt8]) throws -> (ciphertext: [UInt8], tag: [UInt8]) {
        let context = try start(key: key, iv: iv, encrypt: true)
        defer { EVP_CIPHER_CTX_free(context) }
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        var written: Int32 = 0
        var tail: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            EVP_CipherUpdate(context, buffer.baseAddress, &written, plaintext, Int32(plaintext.count)) == 1
                && EVP_CipherFinal_ex(context, buffer.baseAddress! + Int(written), &tail) == 1
        }
        guard ok else { throw CryptoError("AES-GCM encryption failed: \(OpenSSLError.last())") }
        var tag = [UInt8](repeating: 0, count: tagLength)
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tagLength), &tag) == 1 else {
            throw CryptoError("AES-GCM gave no tag: \(OpenSSLError.last())")
        }
        return (Array(out.prefix(Int(written + tail))), tag)
    }

    /// Decrypts and checks the tag; a wrong tag (tampered data or a wrong key) throws and returns nothing.
    public static func open(key: SecretBytes, iv: [UInt8], _ ciphertext: ArraySlice<UInt8>, tag: [UInt8]) throws -> [UInt8] {
        guard tag.count == tagLength else { throw CryptoError("an AES-GCM tag is \(tagLength) bytes, not \(tag.count)") }
        let context = try start(key: key, iv: iv, encrypt: false)
        defer { EVP_CIPHER_CTX_free(context) }
        var expected = tag
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagLength), &expected) == 1 else {
            throw CryptoError("AES-GCM refused the tag: \(OpenSSLError.last())")
        }
        var out = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var written: Int32 = 0
        var tail: Int32 = 0
        let updated = out.withUnsafeMutableBufferPointer { buffer in
            ciphertext.withUnsafeBufferPointer { input in
                EVP_CipherUpdate(context, buffer.baseAddress, &written, input.baseAddress, Int32(input.count)) == 1
            }
        }
        let final = updated && out.withUnsafeMutableBufferPointer { EVP_CipherFinal_ex(context, $0.baseAddress! + Int(written), &tail) == 1 }
        guard final else {
            SecretBytes.zero(&out)
            ERR_clear_error()
            throw CryptoError("the AES-GCM tag does not match (wrong key or changed data)")
        }
        out.removeSubrange(Int(written + tail)...)
        return out
    }

    private static func start(key: SecretBytes, iv: [UInt8], encrypt: Bool) throws -> OpaquePointer {
        let cipher: OpaquePointer? = switch key.count {
        case 16: EVP_aes_128_gcm()
        case 24: EVP_aes_192_gcm()
        case 32: EVP_aes_256_gcm()
        default: nil
        }
        guard let cipher else { throw CryptoError("an AES key is 16, 24 or 32 bytes, not \(key.count)") }
        guard iv.count == ivLength else { throw CryptoError("an AES-GCM IV is \(ivLength) bytes here, not \(iv.count)") }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError("out of memory") }
        let ok = key.withBytes { keyBytes in
            EVP_CipherInit_ex(context, cipher, nil, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), iv, encrypt ? 1 : 0) == 1
        }
        guard ok else {
            EVP_CIPHER_CTX_free(context)
            throw CryptoError("AES-GCM setup failed: \(OpenSSLError.last())")
        }
        return context
    }
}

import COpenSSL

/// AES decryption of data that arrives in pieces: GCM (the tag given at the end) or CBC with
/// PKCS#7 padding. Plaintext is handed on as it comes; `finish` authenticates (GCM) or checks the
/// padding (CBC) and throws when that fails, so a caller that handed plaintext on must drop it.
public final class AESStreamDecryption {
    public enum Mode { case gcm, cbcPadded }

    private let mode: Mode
    private let context: OpaquePointer
    /// Reused for every piece; zeroed when done (it held plaintext).
    private var scratch = [UInt8](repeating: 0, count: 1 << 16)

    public init(_ mode: Mode, key: SecretBytes, iv: [UInt8]) throws {
        self.mode = mode
        let cipher: OpaquePointer? = switch (mode, key.count) {
        case (.gcm, 16): EVP_aes_128_gcm()
        case (.gcm, 24): EVP_aes_192_gcm()
        case (.gcm, 32): EVP_aes_256_gcm()
        case (.cbcPadded, 16): EVP_aes_128_cbc()
        case (.cbcPadded, 24): EVP_aes_192_cbc()
        case (.cbcPadded, 32): EVP_aes_256_cbc()
        default: nil
        }
        guard let cipher else { throw CryptoError("an AES key is 16, 24 or 32 bytes, not \(key.count)") }
        let ivLength = mode == .gcm ? AESGCM.ivLength : AES.blockSize
        guard iv.count == ivLength else { throw CryptoError("the IV is \(ivLength) bytes here, not \(iv.count)") }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError("out of memory") }
        let ok = key.withBytes { keyBytes in
            EVP_CipherInit_ex(context, cipher, nil, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), iv, 0) == 1
        }
        guard ok else {
            EVP_CIPHER_CTX_free(context)
            throw CryptoError("AES setup failed: \(OpenSSLError.last())")
        }
        self.context = context
    }

    deinit {
        SecretBytes.zero(&scratch)
        EVP_CIPHER_CTX_free(context)
    }

    /// Decrypts `input`, handing what plaintext is ready to `output` (CBC keeps back the last block).
    public func update(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void) throws {
        let piece = scratch.count - AES.blockSize
        var offset = 0
        while offset < input.count {
            let count = min(piece, input.count - offset)
            var written: Int32 = 0
            let ok = scratch.withUnsafeMutableBufferPointer { out in
                EVP_CipherUpdate(context, out.baseAddress, &written, input.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset,
                                 Int32(count)) == 1
            }
            guard ok else { throw CryptoError("AES decryption failed: \(OpenSSLError.last())") }
            try scratch.withUnsafeBytes { try output(UnsafeRawBufferPointer(rebasing: $0[..<Int(written)])) }
            offset += count
        }
    }

    /// The last plaintext, after the tag (GCM: `tag`) or the padding (CBC) is checked.
    public func finish(tag: [UInt8]? = nil, output: (UnsafeRawBufferPointer) throws -> Void) throws {
        if mode == .gcm {
            guard var expected = tag, expected.count == AESGCM.tagLength else { throw CryptoError("an AES-GCM tag is 16 bytes") }
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(expected.count), &expected) == 1 else {
                throw CryptoError("AES-GCM refused the tag: \(OpenSSLError.last())")
            }
        }
        var written: Int32 = 0
        let ok = scratch.withUnsafeMutableBufferPointer { EVP_CipherFinal_ex(context, $0.baseAddress, &written) == 1 }
        guard ok else {
            ERR_clear_error()
            throw CryptoError(mode == .gcm ? "the AES-GCM tag does not match (wrong key or changed data)"
                                           : "AES-CBC decryption failed (wrong key or changed data)")
        }
        try scratch.withUnsafeBytes { try output(UnsafeRawBufferPointer(rebasing: $0[..<Int(written)])) }
    }
}

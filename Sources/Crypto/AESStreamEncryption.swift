import COpenSSL

/// AES encryption of data that arrives in pieces: GCM (the tag comes out of `finish`) or CBC with
/// PKCS#7 padding (added by `finish`). The counterpart of `AESStreamDecryption`; the bytes are
/// those `AESGCM.seal` and `AESCBCPadded.encrypt` give for the whole input at once.
public final class AESStreamEncryption {
    public typealias Mode = AESStreamDecryption.Mode

    private let mode: Mode
    private let context: OpaquePointer
    /// Reused for every piece; it only ever holds ciphertext.
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
            EVP_CipherInit_ex(context, cipher, nil, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), iv, 1) == 1
        }
        guard ok else {
            EVP_CIPHER_CTX_free(context)
            throw CryptoError("AES setup failed: \(OpenSSLError.last())")
        }
        self.context = context
    }

    // Freeing the context clears the key schedule and any plaintext block CBC held back.
    deinit { EVP_CIPHER_CTX_free(context) }

    /// Encrypts `input`, handing what ciphertext is ready to `output` (CBC keeps back a partial block).
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
            guard ok else { throw CryptoError("AES encryption failed: \(OpenSSLError.last())") }
            try scratch.withUnsafeBytes { try output(UnsafeRawBufferPointer(rebasing: $0[..<Int(written)])) }
            offset += count
        }
    }

    /// The last ciphertext (CBC: the padded final block) to `output`; returns the GCM tag, or nil for CBC.
    public func finish(output: (UnsafeRawBufferPointer) throws -> Void) throws -> [UInt8]? {
        var written: Int32 = 0
        let ok = scratch.withUnsafeMutableBufferPointer { EVP_CipherFinal_ex(context, $0.baseAddress, &written) == 1 }
        guard ok else { throw CryptoError("AES encryption failed: \(OpenSSLError.last())") }
        try scratch.withUnsafeBytes { try output(UnsafeRawBufferPointer(rebasing: $0[..<Int(written)])) }
        guard mode == .gcm else { return nil }
        var tag = [UInt8](repeating: 0, count: AESGCM.tagLength)
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tag.count), &tag) == 1 else {
            throw CryptoError("AES-GCM gave no tag: \(OpenSSLError.last())")
        }
        return tag
    }
}

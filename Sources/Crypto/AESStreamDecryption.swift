import COpenSSL

/// AES decryption of data that arrives in pieces: GCM (the tag given at the end) or CBC with
/// PKCS#7 padding. Plaintext is handed on as it comes; `finish` authenticates (GCM) or checks the
/// padding (CBC) and throws when that fails, so a caller that handed plaintext on must drop it.
public final class AESStreamDecryption {
    public enum Mode { case gcm, cbcPadded }

    private let cipher: AESStreamCipher

    public init(_ mode: Mode, key: SecretBytes, iv: [UInt8]) throws {
        cipher = try AESStreamCipher(mode, key: key, iv: iv, encrypting: false)
    }

    /// Decrypts `input`, handing what plaintext is ready to `output` (CBC keeps back the last block).
    public func update(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void) throws {
        try cipher.update(input, output: output)
    }

    /// The last plaintext, after the tag (GCM: `tag`) or the padding (CBC) is checked.
    public func finish(tag: [UInt8]? = nil, output: (UnsafeRawBufferPointer) throws -> Void) throws {
        if cipher.mode == .gcm {
            guard var expected = tag, expected.count == AESGCM.tagLength else { throw CryptoError("an AES-GCM tag is 16 bytes") }
            guard EVP_CIPHER_CTX_ctrl(cipher.context, EVP_CTRL_GCM_SET_TAG, Int32(expected.count), &expected) == 1 else {
                throw CryptoError("AES-GCM refused the tag: \(OpenSSLError.last())")
            }
        }
        guard try cipher.final(output: output) else {
            throw CryptoError(cipher.mode == .gcm ? "the AES-GCM tag does not match (wrong key or changed data)"
                                                  : "AES-CBC decryption failed (wrong key or changed data)")
        }
    }
}

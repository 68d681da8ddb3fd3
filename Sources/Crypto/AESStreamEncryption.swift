import COpenSSL

/// AES encryption of data that arrives in pieces: GCM (the tag comes out of `finish`) or CBC with
/// PKCS#7 padding (added by `finish`). The counterpart of `AESStreamDecryption`; the whole-buffer
/// `AESGCM.seal` and `AESCBCPadded.encrypt` are this with all the input in one piece.
public final class AESStreamEncryption {
    public typealias Mode = AESStreamDecryption.Mode

    private let cipher: AESStreamCipher

    public init(_ mode: Mode, key: SecretBytes, iv: [UInt8]) throws {
        cipher = try AESStreamCipher(mode, key: key, iv: iv, encrypting: true)
    }

    /// Encrypts `input`, handing what ciphertext is ready to `output` (CBC keeps back a partial block).
    public func update(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void) throws {
        try cipher.update(input, output: output)
    }

    /// The last ciphertext (CBC: the padded final block) to `output`; returns the GCM tag, or nil for CBC.
    public func finish(output: (UnsafeRawBufferPointer) throws -> Void) throws -> [UInt8]? {
        guard try cipher.final(output: output) else { throw CryptoError("AES encryption failed at its end") }
        guard cipher.mode == .gcm else { return nil }
        var tag = [UInt8](repeating: 0, count: AESGCM.tagLength)
        guard EVP_CIPHER_CTX_ctrl(cipher.context, EVP_CTRL_GCM_GET_TAG, Int32(tag.count), &tag) == 1 else {
            throw CryptoError("AES-GCM gave no tag: \(OpenSSLError.last())")
        }
        return tag
    }
}

import COpenSSL

/// ChaCha20-Poly1305 (RFC 8439) through OpenSSL's EVP_CIPHER, streaming: AAD first, then any
/// number of `update` calls, then the tag. A decryption's plaintext is unauthenticated until
/// `finishDecrypting` returns true.
public final class ChaCha20Poly1305 {
    public static let keySize = 32, nonceSize = 12, tagSize = 16
    private let context: OpaquePointer
    private let encrypting: Bool

    public init(key: SecretBytes, nonce: [UInt8], encrypting: Bool) throws {
        guard key.count == Self.keySize, nonce.count == Self.nonceSize else {
            throw CryptoError("ChaCha20-Poly1305 takes a 32-byte key and a 12-byte nonce")
        }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError("out of memory") }
        self.context = context
        self.encrypting = encrypting
        let ok = key.withBytes { keyBytes in
            EVP_CipherInit_ex(context, EVP_chacha20_poly1305(), nil,
                              keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), nonce, encrypting ? 1 : 0)
        }
        guard ok == 1 else { throw CryptoError("ChaCha20-Poly1305 setup failed: \(OpenSSLError.last())") }
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    /// Additional authenticated data; all of it before the first `update`.
    public func authenticate(_ data: [UInt8]) throws {
        var written: Int32 = 0
        guard data.isEmpty || EVP_CipherUpdate(context, nil, &written, data, Int32(data.count)) == 1 else {
            throw CryptoError("ChaCha20-Poly1305 failed: \(OpenSSLError.last())")
        }
    }

    /// Encrypts or decrypts `input` into `output` (at least as large); returns the bytes written.
    public func update(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws -> Int {
        guard input.count > 0 else { return 0 }
        precondition(output.count >= input.count && input.count <= Int(Int32.max))
        var written: Int32 = 0
        guard EVP_CipherUpdate(context, output.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
                               input.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(input.count)) == 1 else {
            throw CryptoError("ChaCha20-Poly1305 failed: \(OpenSSLError.last())")
        }
        return Int(written)
    }

    /// The 16-byte tag of everything encrypted.
    public func finishEncrypting() throws -> [UInt8] {
        precondition(encrypting)
        var scratch = [UInt8](repeating: 0, count: 16)
        var written: Int32 = 0
        var tag = [UInt8](repeating: 0, count: Self.tagSize)
        guard EVP_CipherFinal_ex(context, &scratch, &written) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(Self.tagSize), &tag) == 1 else {
            throw CryptoError("ChaCha20-Poly1305 failed: \(OpenSSLError.last())")
        }
        return tag
    }

    /// Whether `tag` authenticates the AAD and everything decrypted.
    public func finishDecrypting(tag: [UInt8]) throws -> Bool {
        precondition(!encrypting)
        guard tag.count == Self.tagSize else { return false }
        var tag = tag
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(Self.tagSize), &tag) == 1 else {
            throw CryptoError("ChaCha20-Poly1305 failed: \(OpenSSLError.last())")
        }
        var scratch = [UInt8](repeating: 0, count: 16)
        var written: Int32 = 0
        return EVP_CipherFinal_ex(context, &scratch, &written) == 1
    }
}

import COpenSSL

/// The EVP cipher context under `AESStreamEncryption` and `AESStreamDecryption`: AES-GCM or
/// AES-CBC with PKCS#7 padding, fed in pieces, each piece's output handed on as it comes.
final class AESStreamCipher {
    let mode: AESStreamDecryption.Mode
    let context: OpaquePointer
    private let encrypting: Bool
    /// Reused for every piece; zeroed when done (decrypting, it held plaintext).
    private var scratch = [UInt8](repeating: 0, count: 1 << 16)

    init(_ mode: AESStreamDecryption.Mode, key: SecretBytes, iv: [UInt8], encrypting: Bool) throws {
        self.mode = mode
        self.encrypting = encrypting
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
            EVP_CipherInit_ex(context, cipher, nil, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), iv, encrypting ? 1 : 0) == 1
        }
        guard ok else {
            EVP_CIPHER_CTX_free(context)
            throw CryptoError("AES setup failed: \(OpenSSLError.last())")
        }
        self.context = context
    }

    // Freeing the context clears the key schedule and any block CBC held back.
    deinit {
        SecretBytes.zero(&scratch)
        EVP_CIPHER_CTX_free(context)
    }

    /// Runs `input` through the cipher, handing what output is ready to `output` (CBC keeps back a block).
    func update(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void) throws {
        let piece = scratch.count - AES.blockSize
        var offset = 0
        while offset < input.count {
            let count = min(piece, input.count - offset)
            var written: Int32 = 0
            let ok = scratch.withUnsafeMutableBufferPointer { out in
                EVP_CipherUpdate(context, out.baseAddress, &written, input.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset,
                                 Int32(count)) == 1
            }
            guard ok else { throw CryptoError("AES \(encrypting ? "encryption" : "decryption") failed: \(OpenSSLError.last())") }
            try scratch.withUnsafeBytes { try output(UnsafeRawBufferPointer(rebasing: $0[..<Int(written)])) }
            offset += count
        }
    }

    /// The cipher's last output to `output`; false when OpenSSL refuses to finish (decrypting:
    /// the tag or the padding is wrong), with its error queue cleared.
    func final(output: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        var written: Int32 = 0
        let ok = scratch.withUnsafeMutableBufferPointer { EVP_CipherFinal_ex(context, $0.baseAddress, &written) == 1 }
        guard ok else {
            ERR_clear_error()
            return false
        }
        try scratch.withUnsafeBytes { try output(UnsafeRawBufferPointer(rebasing: $0[..<Int(written)])) }
        return true
    }

    /// What `body` hands its `output` callback, gathered into one array (the whole-buffer calls
    /// `AESGCM` and `AESCBCPadded`); wiped when `body` throws, as it may hold plaintext.
    static func collect(capacity: Int, _ body: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(capacity)
        do {
            try body { out += $0 }
        } catch {
            SecretBytes.zero(&out)
            throw error
        }
        return out
    }
}

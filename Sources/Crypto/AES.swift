import COpenSSL

/// AES without padding, the block operations PACE and ICAO secure messaging are built from
/// (they pad for themselves, ISO/IEC 7816-4 style). Keys are 16, 24 or 32 bytes.
public enum AES {
    public static let blockSize = 16

    /// AES-CBC encryption of whole blocks; the IV defaults to zeros (as PACE uses it).
    public static func encryptCBC(key: SecretBytes, iv: [UInt8] = zeroBlock, _ data: [UInt8]) throws -> [UInt8] {
        try run(encrypt: true, mode: .cbc, key: key, iv: iv, data)
    }

    /// AES-CBC decryption of whole blocks; the IV defaults to zeros.
    public static func decryptCBC(key: SecretBytes, iv: [UInt8] = zeroBlock, _ data: [UInt8]) throws -> [UInt8] {
        try run(encrypt: false, mode: .cbc, key: key, iv: iv, data)
    }

    /// One block through the raw cipher (ECB): how secure messaging turns its counter into an IV.
    public static func encryptBlock(key: SecretBytes, _ block: [UInt8]) throws -> [UInt8] {
        guard block.count == blockSize else { throw CryptoError("AES encrypts one block of 16 bytes, not \(block.count)") }
        return try run(encrypt: true, mode: .ecb, key: key, iv: nil, block)
    }

    public static let zeroBlock = [UInt8](repeating: 0, count: blockSize)

    private enum Mode { case cbc, ecb }

    private static func cipher(_ mode: Mode, keyLength: Int) throws -> OpaquePointer {
        let cipher: OpaquePointer? = switch (mode, keyLength) {
        case (.cbc, 16): EVP_aes_128_cbc()
        case (.cbc, 24): EVP_aes_192_cbc()
        case (.cbc, 32): EVP_aes_256_cbc()
        case (.ecb, 16): EVP_aes_128_ecb()
        case (.ecb, 24): EVP_aes_192_ecb()
        case (.ecb, 32): EVP_aes_256_ecb()
        default: nil
        }
        guard let cipher else { throw CryptoError("an AES key is 16, 24 or 32 bytes, not \(keyLength)") }
        return cipher
    }

    private static func run(encrypt: Bool, mode: Mode, key: SecretBytes, iv: [UInt8]?, _ data: [UInt8]) throws -> [UInt8] {
        guard data.count % blockSize == 0 else { throw CryptoError("AES without padding takes whole blocks, not \(data.count) bytes") }
        if let iv, iv.count != blockSize { throw CryptoError("an AES IV is 16 bytes, not \(iv.count)") }
        let cipher = try cipher(mode, keyLength: key.count)
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError("out of memory") }
        defer { EVP_CIPHER_CTX_free(context) }
        let initialized = key.withBytes { keyBytes in
            let keyPointer = keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return EVP_CipherInit_ex(context, cipher, nil, keyPointer, iv, encrypt ? 1 : 0)
        }
        guard initialized == 1, EVP_CIPHER_CTX_set_padding(context, 0) == 1 else {
            throw CryptoError("AES setup failed: \(OpenSSLError.last())")
        }
        guard !data.isEmpty else { return [] }
        var out = [UInt8](repeating: 0, count: data.count + blockSize)
        var written: Int32 = 0
        var tail: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            EVP_CipherUpdate(context, buffer.baseAddress, &written, data, Int32(data.count)) == 1
                && EVP_CipherFinal_ex(context, buffer.baseAddress! + Int(written), &tail) == 1
        }
        guard ok else {
            SecretBytes.zero(&out)
            throw CryptoError("AES failed: \(OpenSSLError.last())")
        }
        let result = Array(out.prefix(Int(written + tail)))
        SecretBytes.zero(&out)
        return result
    }
}

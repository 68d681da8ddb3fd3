/// AES-CBC with OpenSSL's standard PKCS#7 padding (what CDOC 1.0's payload cipher adds after its
/// own X9.23 padding). The block-only variant without padding is `AES.encryptCBC`.
public enum AESCBCPadded {
    public static func encrypt(key: SecretBytes, iv: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        let encryption = try AESStreamEncryption(.cbcPadded, key: key, iv: iv)
        return try AESStreamCipher.collect(capacity: data.count + AES.blockSize) { out in
            try data.withUnsafeBytes { try encryption.update($0, output: out) }
            _ = try encryption.finish(output: out)
        }
    }

    /// Decrypts and removes the PKCS#7 padding; a bad padding (wrong key, changed data) throws.
    public static func decrypt(key: SecretBytes, iv: [UInt8], _ data: ArraySlice<UInt8>) throws -> [UInt8] {
        guard data.count % AES.blockSize == 0, !data.isEmpty else {
            throw CryptoError("AES-CBC data is whole blocks, not \(data.count) bytes")
        }
        let decryption = try AESStreamDecryption(.cbcPadded, key: key, iv: iv)
        return try AESStreamCipher.collect(capacity: data.count) { out in
            try data.withUnsafeBytes { try decryption.update($0, output: out) }
            try decryption.finish(output: out)
        }
    }
}

/// AES-GCM (128/192/256 by key length) with a 12-byte IV and a 16-byte tag, no AAD: CDOC 1.1's payload.
public enum AESGCM {
    public static let ivLength = 12
    public static let tagLength = 16

    /// Encrypts `plaintext`: the ciphertext (same length) and the tag.
    public static func seal(key: SecretBytes, iv: [UInt8], _ plaintext: [UInt8]) throws -> (ciphertext: [UInt8], tag: [UInt8]) {
        let encryption = try AESStreamEncryption(.gcm, key: key, iv: iv)
        var tag: [UInt8]?
        let ciphertext = try AESStreamCipher.collect(capacity: plaintext.count) { out in
            try plaintext.withUnsafeBytes { try encryption.update($0, output: out) }
            tag = try encryption.finish(output: out)
        }
        return (ciphertext, tag ?? [])
    }

    /// Decrypts and checks the tag; a wrong tag (tampered data or a wrong key) throws and returns nothing.
    public static func open(key: SecretBytes, iv: [UInt8], _ ciphertext: ArraySlice<UInt8>, tag: [UInt8]) throws -> [UInt8] {
        guard tag.count == tagLength else { throw CryptoError("an AES-GCM tag is \(tagLength) bytes, not \(tag.count)") }
        let decryption = try AESStreamDecryption(.gcm, key: key, iv: iv)
        return try AESStreamCipher.collect(capacity: ciphertext.count) { out in
            try ciphertext.withUnsafeBytes { try decryption.update($0, output: out) }
            try decryption.finish(tag: tag, output: out)
        }
    }
}

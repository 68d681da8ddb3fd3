import Crypto

/// CDOC2's key schedule (spec §2.3–2.4): the file master key, the keys derived from it, and
/// each capsule's key-encryption key. Labels are ASCII without a terminator.
enum CDOC2Keys {
    static let keySize = 32

    static func label(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A fresh FMK: HKDF-Extract over 32 random bytes with salt "CDOC20salt".
    static func newFMK() throws -> SecretBytes {
        try HKDF.extract(salt: label("CDOC20salt"), ikm: try SecureRandom.secret(keySize))
    }

    static func headerKey(fmk: SecretBytes) throws -> SecretBytes {
        try HKDF.expand(prk: fmk, info: label("CDOC20hmac"), length: keySize)
    }

    static func contentKey(fmk: SecretBytes) throws -> SecretBytes {
        try HKDF.expand(prk: fmk, info: label("CDOC20cek"), length: keySize)
    }

    static func headerMAC(fmk: SecretBytes, header: [UInt8]) throws -> [UInt8] {
        try HMAC.sha256(key: try headerKey(fmk: fmk), header)
    }

    /// The payload's associated data: "CDOC20payload" ‖ header ‖ header MAC.
    static func payloadAAD(header: [UInt8], mac: [UInt8]) -> [UInt8] { label("CDOC20payload") + header + mac }

    /// EC capsule: Z from ECDH, then HKDF with the two public keys in the info.
    static func eccKEK(z: SecretBytes, recipientKey: [UInt8], senderKey: [UInt8]) throws -> SecretBytes {
        let prk = try HKDF.extract(salt: label("CDOC20kekpremaster"), ikm: z)
        return try HKDF.expand(prk: prk, info: label("CDOC20kek") + label("XOR") + recipientKey + senderKey, length: keySize)
    }

    /// Symmetric-key and password capsules: the whole header label enters the info.
    static func symmetricKEK(secret: SecretBytes, salt: [UInt8], keyLabel: String) throws -> SecretBytes {
        let prk = try HKDF.extract(salt: salt, ikm: secret)
        return try HKDF.expand(prk: prk, info: label("CDOC20kek") + label("XOR") + label(keyLabel), length: keySize)
    }

    /// FMK XOR KEK, both 32 bytes.
    static func xor(_ a: SecretBytes, _ b: [UInt8]) throws -> SecretBytes {
        guard a.count == keySize, b.count == keySize else { throw CDOCError(.malformed, "a CDOC2 recipient's key is not 32 bytes") }
        var out = a.withBytes { bytes in (0 ..< keySize).map { bytes[$0] ^ b[$0] } }
        defer { SecretBytes.zero(&out) }
        return SecretBytes(out)
    }

    /// The stored form of a record's key: FMK XOR KEK (not secret without the KEK).
    static func encryptedFMK(_ fmk: SecretBytes, _ kek: SecretBytes) throws -> [UInt8] {
        guard fmk.count == keySize, kek.count == keySize else { throw CDOCError(.malformed, "a CDOC2 key is not 32 bytes") }
        return fmk.withBytes { f in kek.withBytes { k in (0 ..< keySize).map { f[$0] ^ k[$0] } } }
    }
}

import Crypto

/// The PACE protocols this client speaks: ECDH with generic mapping, AES-CBC and CMAC
/// (BSI TR-03110-3 / ICAO 9303-11 §9). Integrated mapping is not implemented.
public enum PACEAlgorithm: Sendable, CaseIterable {
    /// id-PACE-ECDH-GM-AES-CBC-CMAC-128, 0.4.0.127.0.7.2.2.4.2.2
    case ecdhGenericMappingAES128
    /// id-PACE-ECDH-GM-AES-CBC-CMAC-192, 0.4.0.127.0.7.2.2.4.2.3
    case ecdhGenericMappingAES192
    /// id-PACE-ECDH-GM-AES-CBC-CMAC-256, 0.4.0.127.0.7.2.2.4.2.4 (the Estonian ID-card's)
    case ecdhGenericMappingAES256

    /// The OID's DER content bytes, as MSE:SET AT and the authentication token carry them.
    public var oid: [UInt8] {
        switch self {
        case .ecdhGenericMappingAES128: [0x04, 0x00, 0x7F, 0x00, 0x07, 0x02, 0x02, 0x04, 0x02, 0x02]
        case .ecdhGenericMappingAES192: [0x04, 0x00, 0x7F, 0x00, 0x07, 0x02, 0x02, 0x04, 0x02, 0x03]
        case .ecdhGenericMappingAES256: [0x04, 0x00, 0x7F, 0x00, 0x07, 0x02, 0x02, 0x04, 0x02, 0x04]
        }
    }

    public init?(oid: [UInt8]) {
        guard let match = Self.allCases.first(where: { $0.oid == oid }) else { return nil }
        self = match
    }

    /// AES key length in bytes.
    var keyLength: Int {
        switch self {
        case .ecdhGenericMappingAES128: 16
        case .ecdhGenericMappingAES192: 24
        case .ecdhGenericMappingAES256: 32
        }
    }

    /// The KDF of ICAO 9303-11 §9.7.1: `H(secret ‖ counter)` cut to the key length, with
    /// H = SHA-1 for AES-128 and SHA-256 for AES-192/256. Counter 1 = KSenc, 2 = KSmac, 3 = Kπ.
    func deriveKey(from secret: SecretBytes, counter: UInt8) -> SecretBytes {
        let hasher = Crypto.Hasher(keyLength == 16 ? .sha1 : .sha256)
        secret.withBytes { hasher.update($0) }
        hasher.update([0, 0, 0, counter])
        var digest = hasher.finish()
        defer { SecretBytes.zero(&digest) }
        return SecretBytes(Array(digest.prefix(keyLength)))
    }

    /// The authentication token: the first 8 bytes of CMAC(KSmac, `7F49 { 06 OID, 86 point }`)
    /// over the other side's ephemeral public point.
    func authenticationToken(macKey: SecretBytes, publicPoint: [UInt8]) throws -> [UInt8] {
        let template = TLV(tag: 0x7F49, value: TLV(tag: 0x06, value: oid).encoded + TLV(tag: 0x86, value: publicPoint).encoded)
        return Array(try CMAC.aes(key: macKey, template.encoded).prefix(8))
    }
}

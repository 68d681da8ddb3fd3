import Crypto

/// The signature algorithm of a `signatures/signHash` request, by OID (spec §9): the one of the
/// credential's `key.algo` that makes the signature asicfs builds, and the form of its value.
struct CSCAlgorithm: Equatable {
    let signAlgo: String
    /// Only with rsaEncryption, which names no hash.
    let hashAlgo: String?
    /// ECDSA values: DER `Ecdsa-Sig-Value` (ecdsa-with-SHA*), or r||s already (BSI ecdsa-plain-SHA*).
    let plainECDSA: Bool

    static let rsaEncryption = "1.2.840.113549.1.1.1"
    static let rsaWith: [DigestAlgorithm: String] = [
        .sha256: "1.2.840.113549.1.1.11", .sha384: "1.2.840.113549.1.1.12", .sha512: "1.2.840.113549.1.1.13",
    ]
    static let ecdsaWith: [DigestAlgorithm: String] = [
        .sha256: "1.2.840.10045.4.3.2", .sha384: "1.2.840.10045.4.3.3", .sha512: "1.2.840.10045.4.3.4",
    ]
    /// BSI TR-03111 ecdsa-plain-SHA256/384/512.
    static let plainECDSAWith: [DigestAlgorithm: String] = [
        .sha256: "0.4.0.127.0.7.1.1.4.1.3", .sha384: "0.4.0.127.0.7.1.1.4.1.4", .sha512: "0.4.0.127.0.7.1.1.4.1.5",
    ]
    static let hashes: [DigestAlgorithm: String] = [
        .sha256: "2.16.840.1.101.3.4.2.1", .sha384: "2.16.840.1.101.3.4.2.2", .sha512: "2.16.840.1.101.3.4.2.3",
    ]

    /// The request's algorithm for `algorithm` among `supported` OIDs, or nil if the key offers none.
    static func choose(_ algorithm: SignatureAlgorithm, supported: [String]) -> CSCAlgorithm? {
        switch algorithm.scheme {
        case .rsaPKCS1:
            if let oid = rsaWith[algorithm.digest], supported.contains(oid) {
                return CSCAlgorithm(signAlgo: oid, hashAlgo: nil, plainECDSA: false)
            }
            if supported.contains(rsaEncryption), let hash = hashes[algorithm.digest] {
                return CSCAlgorithm(signAlgo: rsaEncryption, hashAlgo: hash, plainECDSA: false)
            }
        case .ecdsa:
            if let oid = ecdsaWith[algorithm.digest], supported.contains(oid) {
                return CSCAlgorithm(signAlgo: oid, hashAlgo: nil, plainECDSA: false)
            }
            if let oid = plainECDSAWith[algorithm.digest], supported.contains(oid) {
                return CSCAlgorithm(signAlgo: oid, hashAlgo: nil, plainECDSA: true)
            }
        case .rsaPSS:
            break
        }
        return nil
    }

    /// What to sign with `key`: its usual hash first (P-384 → SHA-384), then the others, the
    /// first the credential supports; the usual one when it supports none (signing then says so).
    static func preferred(for key: PublicKey?, supported: [String]) -> SignatureAlgorithm {
        let usual = key?.preferredAlgorithm ?? SignatureAlgorithm(.rsaPKCS1, .sha256)
        let candidates = [usual] + [DigestAlgorithm.sha256, .sha384, .sha512].map { SignatureAlgorithm(usual.scheme, $0) }
        return candidates.first { choose($0, supported: supported) != nil } ?? usual
    }

    /// The value as XAdES takes it: RSA as it came, ECDSA as r||s of the key's size.
    func xmlValue(_ value: [UInt8], key: PublicKey?) -> [UInt8]? {
        guard let length = key?.ecdsaRawSignatureLength else { return value }
        if plainECDSA { return value.count == length ? value : nil }
        return ECDSASignature.raw(fromDER: value, fieldBytes: length / 2)
    }
}

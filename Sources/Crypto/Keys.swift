import COpenSSL

/// A public key (OpenSSL EVP_PKEY), taken from a certificate.
public final class PublicKey: @unchecked Sendable {
    let pkey: OpaquePointer

    init(owning pkey: OpaquePointer) { self.pkey = pkey }
    deinit { EVP_PKEY_free(pkey) }

    public var isRSA: Bool { EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA }
    public var isEC: Bool { EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC }
    /// An RSA key whose certificate allows only RSA-PSS (id-RSASSA-PSS in SubjectPublicKeyInfo).
    public var isRSAPSS: Bool { EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA_PSS }
    public var bits: Int { Int(EVP_PKEY_get_bits(pkey)) }

    /// The hash libdigidocpp pairs with this key when signing: EC P-256 → SHA-256, P-384 → SHA-384,
    /// other EC → SHA-512; RSA → SHA-256 (RSA-PSS for a key that allows only PSS).
    public var preferredAlgorithm: SignatureAlgorithm {
        guard isEC else { return SignatureAlgorithm(isRSAPSS ? .rsaPSS : .rsaPKCS1, .sha256) }
        switch bits {
        case 256: return SignatureAlgorithm(.ecdsa, .sha256)
        case 384: return SignatureAlgorithm(.ecdsa, .sha384)
        default: return SignatureAlgorithm(.ecdsa, .sha512)
        }
    }

    /// Checks `signature` over an already computed `digest`. ECDSA signatures are the raw r||s
    /// that XML-DSig uses (DER is accepted too, as some producers write it).
    /// The length of a raw r||s ECDSA signature with this key (nil for other keys).
    public var ecdsaRawSignatureLength: Int? { isEC ? 2 * ((bits + 7) / 8) : nil }

    public func verify(signature: [UInt8], digest: [UInt8], algorithm: SignatureAlgorithm) -> Bool {
        var signature = signature
        if algorithm.scheme == .ecdsa {
            // XML-DSig 1.1 prescribes raw r||s, exactly twice the field size; a DER SEQUENCE
            // { r, s } is refused, as the reference (xmlsec) refuses it.
            guard isEC, signature.count == ecdsaRawSignatureLength,
                  let der = ECDSASignature.der(fromRaw: signature) else { return false }
            signature = der
        } else if !isRSA && !isRSAPSS {
            return false
        }
        guard let context = EVP_PKEY_CTX_new(pkey, nil) else { return false }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_verify_init(context) == 1,
              configure(context, algorithm) else { return false }
        return EVP_PKEY_verify(context, signature, signature.count, digest, digest.count) == 1
    }

    /// Checks a signature over `data` (hashing it first).
    public func verify(signature: [UInt8], data: [UInt8], algorithm: SignatureAlgorithm) -> Bool {
        verify(signature: signature, digest: Digest.hash(data, algorithm.digest), algorithm: algorithm)
    }

    func configure(_ context: OpaquePointer, _ algorithm: SignatureAlgorithm) -> Bool {
        guard EVP_PKEY_CTX_set_signature_md(context, algorithm.digest.md) == 1 else { return false }
        switch algorithm.scheme {
        case .rsaPKCS1: return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
        case .rsaPSS:
            return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1
                && EVP_PKEY_CTX_set_rsa_mgf1_md(context, algorithm.digest.md) == 1
                && EVP_PKEY_CTX_set_rsa_pss_saltlen(context, RSA_PSS_SALTLEN_DIGEST) == 1
        case .ecdsa: return true
        }
    }
}

/// A private key held in memory (from a PKCS#12 file). Signs digests the signing session computes.
public final class PrivateKey: @unchecked Sendable {
    let pkey: OpaquePointer

    init(owning pkey: OpaquePointer) { self.pkey = pkey }
    deinit { EVP_PKEY_free(pkey) }

    public var isEC: Bool { EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC }

    /// Signs a digest. ECDSA results are returned as raw r||s padded to the curve size (XML-DSig).
    public func sign(digest: [UInt8], algorithm: SignatureAlgorithm) throws -> [UInt8] {
        guard let context = EVP_PKEY_CTX_new(pkey, nil) else { throw CryptoError("out of memory") }
        defer { EVP_PKEY_CTX_free(context) }
        let key = PublicKey(owning: pkey)
        EVP_PKEY_up_ref(pkey)
        guard EVP_PKEY_sign_init(context) == 1, key.configure(context, algorithm) else {
            throw CryptoError("this key cannot make \(algorithm) signatures")
        }
        let signature = try SizedOutput.bytes("the key refused to sign") { EVP_PKEY_sign(context, $0, &$1, digest, digest.count) }
        if algorithm.scheme == .ecdsa {
            guard let raw = ECDSASignature.raw(fromDER: signature, fieldBytes: (key.bits + 7) / 8) else {
                throw CryptoError("OpenSSL returned an unreadable ECDSA signature")
            }
            return raw
        }
        return signature
    }

    /// True when this key belongs to `certificate`.
    public func matches(_ certificate: Certificate) -> Bool {
        guard let publicKey = certificate.publicKey else { return false }
        return EVP_PKEY_eq(pkey, publicKey.pkey) == 1
    }
}

/// XML-DSig writes ECDSA as raw r||s (each the curve's field size); OpenSSL speaks DER.
public enum ECDSASignature {
    public static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count >= 2, raw.count % 2 == 0 else { return nil }
        let half = raw.count / 2
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let r = BN_bin2bn(raw, Int32(half), nil)
        let s = Array(raw[half...]).withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(half), nil) }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else { BN_free(r); BN_free(s); return nil }
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_ECDSA_SIG(signature, &out)
        guard length > 0, let out else { return nil }
        defer { copenssl_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    public static func raw(fromDER der: [UInt8], fieldBytes: Int) -> [UInt8]? {
        var pointer: UnsafePointer<UInt8>? = nil
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            pointer = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &pointer, buffer.count)
        }
        guard let parsed else { return nil }
        defer { ECDSA_SIG_free(parsed) }
        var r: OpaquePointer? = nil, s: OpaquePointer? = nil
        ECDSA_SIG_get0(parsed, &r, &s)
        var out = [UInt8](repeating: 0, count: fieldBytes * 2)
        guard BN_bn2binpad(r, &out, Int32(fieldBytes)) == fieldBytes else { return nil }
        let tail = out.withUnsafeMutableBufferPointer { BN_bn2binpad(s, $0.baseAddress! + fieldBytes, Int32(fieldBytes)) }
        guard tail == fieldBytes else { return nil }
        return out
    }
}

/// The newest entry of OpenSSL's error queue, as text, for messages; clears the queue.
enum OpenSSLError {
    static func last() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "no details" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(cString: buffer)
    }
}

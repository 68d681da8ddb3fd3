import COpenSSL

/// Key transport and key agreement for encrypted containers (CDOC): ECDH with a peer's point,
/// RSA encryption of a wrapped key, and the key shapes CDOC writes (an EC point, PKCS#1 RSA).
public enum RSAKeyPadding: Sendable {
    /// PKCS#1 v1.5 (CDOC 1.x `xmlenc#rsa-1_5`).
    case pkcs1v15
    /// OAEP with SHA-256 and MGF1-SHA-256, empty label (CDOC2 RSA capsules).
    case oaepSHA256
}

extension PublicKey {
    /// The curve of an EC key (nil for RSA or a curve asicfs does not name).
    public var curve: EllipticCurve? {
        guard isEC else { return nil }
        var name = [CChar](repeating: 0, count: 64)
        guard EVP_PKEY_get_utf8_string_param(pkey, "group", &name, name.count, nil) == 1 else { return nil }
        switch String(decoding: name.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self) {
        case "prime256v1", "P-256": return .p256
        case "secp384r1", "P-384": return .p384
        case "secp521r1", "P-521": return .p521
        default: return nil
        }
    }

    /// An EC key as its uncompressed point (04 || X || Y); an RSA key as PKCS#1 RSAPublicKey DER.
    /// This is how CDOC2 writes `recipient_public_key`.
    public func rawKeyBytes() throws -> [UInt8] {
        if isEC {
            var length = 0
            guard EVP_PKEY_get_octet_string_param(pkey, "encoded-pub-key", nil, 0, &length) == 1 else {
                throw CryptoError("cannot read the EC public key: \(OpenSSLError.last())")
            }
            var point = [UInt8](repeating: 0, count: length)
            guard EVP_PKEY_get_octet_string_param(pkey, "encoded-pub-key", &point, length, &length) == 1 else {
                throw CryptoError("cannot read the EC public key: \(OpenSSLError.last())")
            }
            return Array(point[..<length])
        }
        guard isRSA || isRSAPSS else { throw CryptoError("only RSA and EC keys can receive encrypted containers") }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_PublicKey(pkey, &out)
        guard length > 0, let out else { throw CryptoError("cannot encode the RSA public key: \(OpenSSLError.last())") }
        defer { copenssl_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// SubjectPublicKeyInfo DER (what a certificate holds).
    public func subjectPublicKeyInfo() throws -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(pkey, &out)
        guard length > 0, let out else { throw CryptoError("cannot encode the public key: \(OpenSSLError.last())") }
        defer { copenssl_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// An EC public key from its uncompressed point on `curve`.
    public static func ec(point: [UInt8], curve: EllipticCurve) throws -> PublicKey {
        let group = try ECGroup(curve)
        _ = try ECPoint(uncompressed: point, on: group)   // refuses a point not on the curve
        var name = [CChar](curve.opensslGroupName.utf8CString)
        var bytes = point
        let key: OpaquePointer? = name.withUnsafeMutableBufferPointer { namePointer in
            bytes.withUnsafeMutableBytes { pointBytes in
                // OSSL_PARAM keeps the key pointers: they must outlive the call (static strings).
                var params = [
                    OSSL_PARAM_construct_utf8_string(Self.cString("group"), namePointer.baseAddress, 0),
                    OSSL_PARAM_construct_octet_string(Self.cString("pub"), pointBytes.baseAddress, pointBytes.count),
                    OSSL_PARAM_construct_end(),
                ]
                return Self.fromData("EC", &params, selection: copenssl_evp_pkey_public_key())
            }
        }
        guard let key else { throw CryptoError("not a valid \(curve.rawValue) public key: \(OpenSSLError.last())") }
        return PublicKey(owning: key)
    }

    /// An RSA public key from PKCS#1 RSAPublicKey DER (CDOC2's `recipient_public_key`).
    public static func rsa(pkcs1 der: [UInt8]) throws -> PublicKey {
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PublicKey(EVP_PKEY_RSA, nil, &cursor, buffer.count)
        }
        guard let key else { throw CryptoError("not a valid RSA public key: \(OpenSSLError.last())") }
        return PublicKey(owning: key)
    }

    /// A public key from SubjectPublicKeyInfo DER or PEM ("-----BEGIN PUBLIC KEY-----").
    public static func read(_ bytes: [UInt8]) throws -> PublicKey {
        let key: OpaquePointer? = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            if let pem = PEM_read_bio_PUBKEY(bio, nil, nil, nil) { return pem }
            ERR_clear_error()
            var cursor = raw.bindMemory(to: UInt8.self).baseAddress.map { UnsafePointer($0) }
            return d2i_PUBKEY(nil, &cursor, raw.count)
        }
        guard let key else { throw CryptoError("not a public key (PEM or DER SubjectPublicKeyInfo)") }
        return PublicKey(owning: key)
    }

    /// Encrypts a short secret (a key) for this RSA key.
    public func encrypt(_ secret: SecretBytes, padding: RSAKeyPadding) throws -> [UInt8] {
        guard isRSA else { throw CryptoError("only an RSA key can encrypt a key for its holder") }
        guard let context = EVP_PKEY_CTX_new(pkey, nil) else { throw CryptoError("out of memory") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_encrypt_init(context) == 1, Self.configure(context, padding) else {
            throw CryptoError("cannot set up RSA encryption: \(OpenSSLError.last())")
        }
        return try secret.withBytes { input -> [UInt8] in
            let base = input.bindMemory(to: UInt8.self).baseAddress
            return try SizedOutput.bytes("RSA encryption failed") { EVP_PKEY_encrypt(context, $0, &$1, base, input.count) }
        }
    }

    static func configure(_ context: OpaquePointer, _ padding: RSAKeyPadding) -> Bool {
        switch padding {
        case .pkcs1v15:
            return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
        case .oaepSHA256:
            return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING) == 1
                && EVP_PKEY_CTX_set_rsa_oaep_md(context, EVP_sha256()) == 1
                && EVP_PKEY_CTX_set_rsa_mgf1_md(context, EVP_sha256()) == 1
        }
    }

    private static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    fileprivate static func fromData(_ type: String, _ params: inout [OSSL_PARAM], selection: Int32) -> OpaquePointer? {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
              EVP_PKEY_fromdata(context, &key, selection, &params) == 1 else { return nil }
        return key
    }
}

extension PrivateKey {
    /// A private key from PEM (PKCS#8, traditional RSA/EC; encrypted PEM with `passphrase`) or DER.
    public static func read(_ bytes: [UInt8], passphrase: SecretBytes? = nil) throws -> PrivateKey {
        let key: OpaquePointer? = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            let pem: OpaquePointer?
            if let passphrase {
                pem = passphrase.withCString { PEM_read_bio_PrivateKey(bio, nil, nil, UnsafeMutableRawPointer(mutating: $0)) }
            } else {
                pem = PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
            }
            if let pem { return pem }
            ERR_clear_error()
            var cursor = raw.bindMemory(to: UInt8.self).baseAddress.map { UnsafePointer($0) }
            return d2i_AutoPrivateKey(nil, &cursor, raw.count)
        }
        guard let key else { throw CryptoError("not a private key (PEM or DER), or the passphrase is wrong") }
        return PrivateKey(owning: key)
    }

    /// A fresh EC key on `curve` (the sender's ephemeral key of ECDH-ES).
    public static func generateEC(_ curve: EllipticCurve) throws -> PrivateKey {
        guard let key = curve.opensslGroupName.withCString({ copenssl_ec_gen($0) }) else {
            throw CryptoError("cannot make an EC key on \(curve.rawValue): \(OpenSSLError.last())")
        }
        return PrivateKey(owning: key)
    }

    /// The public half.
    public var publicKey: PublicKey {
        EVP_PKEY_up_ref(pkey)
        return PublicKey(owning: pkey)
    }

    public var isRSA: Bool { EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA }

    /// ECDH with `peer` (same curve): the shared secret Z, the X coordinate at full field length.
    public func agree(with peer: PublicKey) throws -> SecretBytes {
        guard isEC, peer.isEC else { throw CryptoError("ECDH needs two EC keys") }
        guard let context = EVP_PKEY_CTX_new(pkey, nil) else { throw CryptoError("out of memory") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer.pkey) == 1 else {
            throw CryptoError("the keys do not agree (different curves?): \(OpenSSLError.last())")
        }
        return try SizedOutput.secret("ECDH failed") { EVP_PKEY_derive(context, $0, &$1) }
    }

    /// Decrypts a key wrapped for this RSA key. A padding error says the key is not the recipient.
    public func decrypt(_ ciphertext: [UInt8], padding: RSAKeyPadding) throws -> SecretBytes {
        guard isRSA else { throw CryptoError("only an RSA key can decrypt a transported key") }
        guard let context = EVP_PKEY_CTX_new(pkey, nil) else { throw CryptoError("out of memory") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_decrypt_init(context) == 1, PublicKey.configure(context, padding) else {
            throw CryptoError("cannot set up RSA decryption: \(OpenSSLError.last())")
        }
        return try SizedOutput.secret("RSA decryption failed", fillFailure: "the key could not decrypt (not this recipient's key?)") {
            EVP_PKEY_decrypt(context, $0, &$1, ciphertext, ciphertext.count)
        }
    }
}

extension EllipticCurve {
    /// OpenSSL's group name for EVP_EC_gen and OSSL_PARAM "group".
    var opensslGroupName: String {
        switch self {
        case .p256: "prime256v1"
        case .p384: "secp384r1"
        case .p521: "secp521r1"
        case .brainpoolP256r1: "brainpoolP256r1"
        case .brainpoolP384r1: "brainpoolP384r1"
        case .brainpoolP512r1: "brainpoolP512r1"
        }
    }
}

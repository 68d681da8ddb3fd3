import COpenSSL

/// A software identity from a PKCS#12 file: the certificate, its private key and any CA
/// certificates packed with it.
public struct PKCS12Identity: Sendable {
    public let certificate: Certificate
    public let privateKey: PrivateKey
    public let chain: [Certificate]

    /// Opens the file's bytes with the passphrase. The passphrase is only lent to OpenSSL.
    public init(bytes: [UInt8], passphrase: SecretBytes, name: String) throws {
        OpenSSLProviders.loadLegacyOnce()
        var pointer: UnsafePointer<UInt8>? = nil
        let p12 = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            pointer = buffer.baseAddress
            return d2i_PKCS12(nil, &pointer, buffer.count)
        }
        guard let p12 else {
            ERR_clear_error()
            throw CryptoError("\(name) is not a PKCS#12 file")
        }
        defer { PKCS12_free(p12) }
        var key: OpaquePointer? = nil
        var cert: OpaquePointer? = nil
        var ca: OpaquePointer? = nil
        let parsed = passphrase.withCString { pass -> Bool in
            guard PKCS12_verify_mac(p12, pass, -1) == 1 else { return false }
            return PKCS12_parse(p12, pass, &key, &cert, &ca) == 1
        }
        guard parsed else {
            ERR_clear_error()
            throw CryptoError("wrong passphrase for \(name)")
        }
        defer { if let ca { copenssl_sk_x509_pop_free(ca) } }
        guard let key else {
            if let cert { X509_free(cert) }
            throw CryptoError("\(name) holds no private key")
        }
        let privateKey = PrivateKey(owning: key)
        guard let cert else { throw CryptoError("\(name) holds no certificate") }
        defer { X509_free(cert) }
        certificate = try Certificate(x509Copy: cert)
        self.privateKey = privateKey
        var others: [Certificate] = []
        if let ca {
            for index in 0..<copenssl_sk_x509_num(ca) {
                if let x509 = copenssl_sk_x509_value(ca, index), let extra = try? Certificate(x509Copy: x509) { others.append(extra) }
            }
        }
        chain = others
        guard privateKey.matches(certificate) else { throw CryptoError("the key in \(name) does not belong to its certificate") }
    }
}

extension Certificate {
    /// A Certificate holding its own copy of an OpenSSL X509 the caller still owns.
    convenience init(x509Copy x509: OpaquePointer) throws {
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509(x509, &out)
        guard length > 0, let out else { throw CryptoError("unreadable certificate") }
        defer { copenssl_free(out) }
        try self.init(der: Array(UnsafeBufferPointer(start: out, count: Int(length))))
    }
}

/// Older PKCS#12 files use RC2/3DES, which OpenSSL 3 keeps in its "legacy" provider.
enum OpenSSLProviders {
    private static let loaded: Bool = {
        _ = OSSL_PROVIDER_load(nil, "default")
        _ = OSSL_PROVIDER_load(nil, "legacy")
        ERR_clear_error()
        return true
    }()

    static func loadLegacyOnce() { _ = loaded }
}

extension PKCS12Identity {
    /// Installs the key, its certificate and the chain into an OpenSSL `SSL_CTX` (libcurl's, for
    /// a TLS client certificate), so that no passphrase or key file is given to anyone else.
    /// False when OpenSSL refused them.
    public func installTLSClient(into sslContext: UnsafeMutableRawPointer) -> Bool {
        let context = OpaquePointer(sslContext)
        defer { ERR_clear_error() }
        guard SSL_CTX_use_certificate(context, certificate.x509) == 1,
              SSL_CTX_use_PrivateKey(context, privateKey.pkey) == 1,
              SSL_CTX_check_private_key(context) == 1 else { return false }
        // SSL_CTX_add1_chain_cert is a macro over SSL_CTX_ctrl (larg 1: the context takes its own reference).
        for extra in chain where SSL_CTX_ctrl(context, SSL_CTRL_CHAIN_CERT, 1, UnsafeMutableRawPointer(extra.x509)) != 1 {
            return false
        }
        return true
    }
}

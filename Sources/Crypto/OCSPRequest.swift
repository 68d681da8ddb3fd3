import COpenSSL

/// An OCSP request for one certificate, as libdigidocpp sends it: CertID with SHA-1 by default
/// (SHA-256 for responders that want it) and a nonce extension.
public struct OCSPRequest: Sendable {
    public enum Nonce: Sendable, Equatable {
        /// 32 fresh random bytes (the RFC 8954 maximum) as an OCTET STRING.
        case random
        /// RFC 8954: the extension value is an OCTET STRING holding these bytes.
        case octetString([UInt8])
        /// These bytes are the extension value as is: the legacy BDOC-TM nonce, a DER DigestInfo.
        case raw([UInt8])
    }

    public let der: [UInt8]
    public let hash: DigestAlgorithm
    /// The nonce sent (never `.random`: the bytes chosen are kept).
    public let nonce: Nonce?
    /// The nonce extension's value exactly as sent; a responder must echo it unchanged.
    public let nonceExtensionValue: [UInt8]?

    /// `nonce: nil` sends none.
    public static func make(certificate: Certificate, issuer: Certificate, hash: DigestAlgorithm = .sha1,
                            nonce: Nonce? = .random) throws -> OCSPRequest {
        let nonce = nonce == .random ? .octetString(try SecureRandom.bytes(32)) : nonce
        guard hash == .sha1 || hash == .sha256 else {
            throw CryptoError("OCSP CertIDs are made with SHA-1 or SHA-256, not \(hash.rawValue)")
        }
        guard let request = OCSP_REQUEST_new() else { throw CryptoError("out of memory") }
        defer { OCSP_REQUEST_free(request) }
        guard let id = OCSP_cert_to_id(hash.md, certificate.x509, issuer.x509) else {
            throw CryptoError("cannot make an OCSP CertID: \(OpenSSLError.last())")
        }
        guard OCSP_request_add0_id(request, id) != nil else {  // on success the request owns the id
            OCSP_CERTID_free(id)
            throw CryptoError("cannot build the OCSP request: \(OpenSSLError.last())")
        }
        switch nonce {
        case .none, .random?: break
        case .octetString(var bytes)?:
            guard OCSP_request_add1_nonce(request, &bytes, Int32(bytes.count)) == 1 else {
                throw CryptoError("cannot add the OCSP nonce: \(OpenSSLError.last())")
            }
        case .raw(let bytes)?:
            try addRawNonce(bytes, to: request)
        }
        var sentValue: [UInt8]? = nil
        let index = OCSP_REQUEST_get_ext_by_NID(request, NID_id_pkix_OCSP_Nonce, -1)
        if index >= 0, let ext = OCSP_REQUEST_get_ext(request, index) {
            sentValue = TimeStampAndOCSP.bytes(X509_EXTENSION_get_data(ext))
        }
        guard let der = TimeStampAndOCSP.der({ i2d_OCSP_REQUEST(request, $0) }) else {
            throw CryptoError("cannot encode the OCSP request: \(OpenSSLError.last())")
        }
        return OCSPRequest(der: der, hash: hash, nonce: nonce, nonceExtensionValue: sentValue)
    }

    private static func addRawNonce(_ bytes: [UInt8], to request: OpaquePointer) throws {
        guard let value = ASN1_OCTET_STRING_new() else { throw CryptoError("out of memory") }
        defer { ASN1_OCTET_STRING_free(value) }
        guard ASN1_OCTET_STRING_set(value, bytes, Int32(bytes.count)) == 1,
              let ext = X509_EXTENSION_create_by_NID(nil, NID_id_pkix_OCSP_Nonce, 0, value) else {
            throw CryptoError("cannot make the OCSP nonce: \(OpenSSLError.last())")
        }
        defer { X509_EXTENSION_free(ext) }
        guard OCSP_REQUEST_add_ext(request, ext, -1) == 1 else {  // copies the extension
            throw CryptoError("cannot add the OCSP nonce: \(OpenSSLError.last())")
        }
    }
}

import COpenSSL
import Foundation

/// Path building and checking with OpenSSL's verifier: which trusted certificate a certificate
/// leads to, at a given time. Which anchors count as trusted is the caller's (Trust's) decision.
public enum CertificateChain {
    /// Verifies `leaf` up to one of `anchors` (any certificate there is accepted as the end of the
    /// path, CA or not), using `intermediates` as untrusted helpers. Returns the path, leaf first.
    public static func verify(_ leaf: Certificate, intermediates: [Certificate], anchors: [Certificate],
                              at time: Date) throws -> [Certificate] {
        guard let store = X509_STORE_new() else { throw CryptoError("out of memory") }
        defer { X509_STORE_free(store) }
        for anchor in anchors { X509_STORE_add_cert(store, anchor.x509) }
        ERR_clear_error()
        guard let untrusted = copenssl_sk_x509_new() else { throw CryptoError("out of memory") }
        defer { copenssl_sk_x509_free(untrusted) }
        for certificate in intermediates { copenssl_sk_x509_push(untrusted, certificate.x509) }
        guard let context = X509_STORE_CTX_new() else { throw CryptoError("out of memory") }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf.x509, untrusted) == 1 else { throw CryptoError("out of memory") }
        let parameters = X509_STORE_CTX_get0_param(context)
        X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN | X509_V_FLAG_USE_CHECK_TIME))
        X509_VERIFY_PARAM_set_time(parameters, time_t(time.timeIntervalSince1970))
        // Key usage and purpose are the caller's checks (signer, TSA, OCSP each need different ones).
        X509_STORE_CTX_set_purpose(context, X509_PURPOSE_ANY)
        if X509_verify_cert(context) != 1 {
            let code = X509_STORE_CTX_get_error(context)
            ERR_clear_error()
            throw CryptoError(String(cString: X509_verify_cert_error_string(Int(code))))
        }
        guard let path = X509_STORE_CTX_get0_chain(context) else { return [leaf] }
        return (0..<copenssl_sk_x509_num(path)).compactMap {
            copenssl_sk_x509_value(path, $0).flatMap { try? Certificate(x509Copy: $0) }
        }
    }
}

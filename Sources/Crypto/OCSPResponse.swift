import COpenSSL
import Foundation

/// An OCSP response (RFC 6960) as read by OpenSSL: its status, and for a successful one the
/// BasicOCSPResponse's facts. Whether the responder is trusted is decided elsewhere (Trust):
/// here the signature is checked against a certificate the caller chooses.
public final class OCSPResponse: @unchecked Sendable {
    public enum Status: Int, Sendable, CustomStringConvertible {
        case successful = 0, malformedRequest, internalError, tryLater, sigRequired = 5, unauthorized

        public var description: String {
            switch self {
            case .successful: "the OCSP responder answered"
            case .malformedRequest: "the OCSP responder could not read the request (malformedRequest)"
            case .internalError: "the OCSP responder failed internally (internalError)"
            case .tryLater: "the OCSP responder is busy; try again later (tryLater)"
            case .sigRequired: "the OCSP responder wants signed requests (sigRequired)"
            case .unauthorized: "the OCSP responder does not serve this client or certificate (unauthorized)"
            }
        }
    }

    /// The OCSPResponse as given (what XAdES stores in EncapsulatedOCSPValue).
    public let der: [UInt8]
    public let status: Status
    private let response: OpaquePointer
    /// The BasicOCSPResponse; nil unless the status is successful.
    private let basic: OpaquePointer?

    public init(der: [UInt8]) throws {
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_OCSP_RESPONSE(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw CryptoError("not a DER OCSP response") }
        guard let status = Status(rawValue: Int(OCSP_response_status(parsed))) else {
            OCSP_RESPONSE_free(parsed)
            throw CryptoError("the OCSP response has an unknown status")
        }
        let basic = OCSP_response_get1_basic(parsed)
        if status == .successful && basic == nil {
            OCSP_RESPONSE_free(parsed)
            throw CryptoError("the OCSP response is not a BasicOCSPResponse")
        }
        self.der = der
        self.status = status
        response = parsed
        self.basic = basic
    }

    deinit {
        if let basic { OCSP_BASICRESP_free(basic) }
        OCSP_RESPONSE_free(response)
    }

    public var producedAt: Date? { basic.flatMap { Certificate.date(OCSP_resp_get0_produced_at($0)) } }

    /// The certificates the response carries (usually the responder's).
    public var certificates: [Certificate] { TimeStampAndOCSP.certificates(basic.flatMap { OCSP_resp_get0_certs($0) }) }

    /// The nonce extension's value exactly as received.
    public var nonceExtensionValue: [UInt8]? {
        guard let basic else { return nil }
        let index = OCSP_BASICRESP_get_ext_by_NID(basic, NID_id_pkix_OCSP_Nonce, -1)
        guard index >= 0, let ext = OCSP_BASICRESP_get_ext(basic, index) else { return nil }
        return TimeStampAndOCSP.bytes(X509_EXTENSION_get_data(ext))
    }

    /// The nonce bytes: the extension value without the OCTET STRING wrapper RFC 8954 puts around
    /// them (stripped only when present, as libdigidocpp does; a raw DigestInfo nonce stays whole).
    public var nonce: [UInt8]? {
        guard let value = nonceExtensionValue else { return nil }
        if value.count >= 2, value[0] == 0x04, Int(value[1]) == value.count - 2, value[1] < 0x80 {
            return Array(value.dropFirst(2))
        }
        if value.count >= 3, value[0] == 0x04, value[1] == 0x81, Int(value[2]) == value.count - 3 {
            return Array(value.dropFirst(3))
        }
        return value
    }

    /// Whether the responder echoed this request's nonce unchanged.
    public func echoesNonce(of request: OCSPRequest) -> Bool {
        request.nonceExtensionValue != nil && nonceExtensionValue == request.nonceExtensionValue
    }

    /// The status of `certificate`, matched by CertID in whichever hash the responder used.
    public func singleResponse(for certificate: Certificate, issuer: Certificate) -> OCSPSingleResponse? {
        guard let basic else { return nil }
        for index in 0..<OCSP_resp_count(basic) {
            guard let single = OCSP_resp_get0(basic, index), let theirs = OCSP_SINGLERESP_get0_id(single) else { continue }
            var hashObject: OpaquePointer? = nil
            guard OCSP_id_get0_info(nil, &hashObject, nil, nil, theirs) == 1,
                  let hash = DigestAlgorithm(nid: OBJ_obj2nid(hashObject)),
                  let ours = OCSP_cert_to_id(hash.md, certificate.x509, issuer.x509) else { continue }
            defer { OCSP_CERTID_free(ours) }
            guard OCSP_id_cmp(ours, theirs) == 0 else { continue }
            return Self.read(single, hash: hash)
        }
        return nil
    }

    /// The carried certificate that signed the response, found by the ResponderID (name or key hash).
    public var responderCertificate: Certificate? {
        guard let basic else { return nil }
        var signer: OpaquePointer? = nil
        guard OCSP_resp_get0_signer(basic, &signer, nil) == 1, let signer else {
            ERR_clear_error()
            return nil
        }
        return try? Certificate(x509Copy: signer)
    }

    /// Whether the BasicOCSPResponse's signature verifies with this certificate's public key.
    public func verifySignature(with certificate: Certificate) -> Bool {
        guard let basic, let key = X509_get0_pubkey(certificate.x509) else { return false }
        defer { ERR_clear_error() }
        return ASN1_item_verify(copenssl_ocsp_respdata_item(), OCSP_resp_get0_tbs_sigalg(basic),
                                OCSP_resp_get0_signature(basic), UnsafeRawPointer(OCSP_resp_get0_respdata(basic)),
                                key) == 1
    }

    private static func read(_ single: OpaquePointer, hash: DigestAlgorithm) -> OCSPSingleResponse? {
        var reason: Int32 = -1
        var revoked: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>? = nil
        var thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>? = nil
        var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>? = nil
        let code = OCSP_single_get0_status(single, &reason, &revoked, &thisUpdate, &nextUpdate)
        guard let this = Certificate.date(thisUpdate) else { return nil }
        let status: OCSPSingleResponse.Status
        switch code {
        case V_OCSP_CERTSTATUS_GOOD: status = .good
        case V_OCSP_CERTSTATUS_REVOKED:
            guard let time = Certificate.date(revoked) else { return nil }
            status = .revoked(at: time, reason: OCSPRevocationReason(rawValue: Int(reason)))
        case V_OCSP_CERTSTATUS_UNKNOWN: status = .unknown
        default: return nil
        }
        return OCSPSingleResponse(status: status, thisUpdate: this, nextUpdate: Certificate.date(nextUpdate),
                                  certIDHash: hash)
    }
}

import COpenSSL
import Foundation

/// An RFC 3161 time-stamp token: a CMS SignedData whose content is a TSTInfo. Read with OpenSSL's
/// CMS parser, which takes both PKCS#7-era tokens and CMS ones (e.g. a signer named by key id).
/// `verify` checks the imprint and the signature; whether the TSA is trusted is Trust's decision.
public struct TimeStampToken: Sendable {
    /// The token as given (what XAdES stores in EncapsulatedTimeStamp).
    public let der: [UInt8]
    public let genTime: Date
    /// The serial number, big-endian.
    public let serial: [UInt8]
    /// The TSA policy under which the token was issued, as a dotted OID.
    public let policy: String?
    public let imprintAlgorithm: DigestAlgorithm
    public let imprint: [UInt8]
    /// The nonce echoed from the request (magnitude of the INTEGER), if any.
    public let nonce: [UInt8]?
    /// Every certificate the token carries.
    public let certificates: [Certificate]
    /// The carried certificate that the SignerInfo names (nil if the token carries none).
    public let signerCertificate: Certificate?

    public init(der: [UInt8]) throws {
        let cms = try Self.parse(der)
        defer { CMS_ContentInfo_free(cms) }
        let info = try Self.tstInfo(cms)
        defer { TS_TST_INFO_free(info) }
        guard TS_TST_INFO_get_version(info) == 1 else { throw CryptoError("the time-stamp token is not TSTInfo version 1") }
        guard let time = TS_TST_INFO_get_time(info), let date = Certificate.date(time) else {
            throw CryptoError("the time-stamp token has no time")
        }
        guard let messageImprint = TS_TST_INFO_get_msg_imprint(info),
              let algorithmObject = TS_MSG_IMPRINT_get_algo(messageImprint)?.pointee.algorithm else {
            throw CryptoError("the time-stamp token has no message imprint")
        }
        guard let algorithm = DigestAlgorithm(nid: OBJ_obj2nid(algorithmObject)) else {
            throw CryptoError("the time-stamp token's imprint uses an unknown hash "
                              + (TimeStampAndOCSP.dottedOID(algorithmObject) ?? ""))
        }
        self.der = der
        genTime = date
        serial = TimeStampAndOCSP.integerBytes(TS_TST_INFO_get_serial(info)) ?? []
        policy = TimeStampAndOCSP.dottedOID(TS_TST_INFO_get_policy_id(info))
        imprintAlgorithm = algorithm
        imprint = TimeStampAndOCSP.bytes(TS_MSG_IMPRINT_get_msg(messageImprint))
        nonce = TS_TST_INFO_get_nonce(info).flatMap { TimeStampAndOCSP.integerBytes($0) }

        // RFC 3161 §2.4.2: the TSA's is the only signature in a token.
        guard let signerInfos = CMS_get0_SignerInfos(cms), copenssl_sk_cms_signerinfo_num(signerInfos) == 1,
              let signerInfo = copenssl_sk_cms_signerinfo_value(signerInfos, 0) else {
            throw CryptoError("a time-stamp token has exactly one signer")
        }
        let carried = CMS_get1_certs(cms)
        defer { if let carried { copenssl_sk_x509_pop_free(carried) } }
        certificates = TimeStampAndOCSP.certificates(carried)
        signerCertificate = certificates.first { CMS_SignerInfo_cert_cmp(signerInfo, $0.x509) == 0 }
    }

    /// Checks that the token is over `imprint` and that its signature verifies with the TSA
    /// certificate (`signer`, or else the one the token carries). Returns the certificate used.
    @discardableResult
    public func verify(imprint: [UInt8], signer: Certificate? = nil) throws -> Certificate {
        guard imprint == self.imprint else {
            throw CryptoError("the time-stamp is over other data: its \(imprintAlgorithm.rawValue) message imprint does not match")
        }
        let cms = try Self.parse(der)
        defer { CMS_ContentInfo_free(cms) }
        guard let given = copenssl_sk_x509_new() else { throw CryptoError("out of memory") }
        defer { copenssl_sk_x509_free(given) }
        var flags = UInt32(CMS_NO_SIGNER_CERT_VERIFY)  // the path to a trusted TSA is Trust's job
        if let signer {
            copenssl_sk_x509_push(given, signer.x509)
            flags |= UInt32(CMS_NOINTERN)  // use exactly the certificate we were given
        }
        ERR_clear_error()
        guard CMS_verify(cms, given, nil, nil, nil, flags) == 1 else {
            throw CryptoError("the time-stamp token's signature does not verify: \(OpenSSLError.last())")
        }
        guard let signers = CMS_get0_signers(cms) else { throw CryptoError("the time-stamp token names no signer") }
        defer { copenssl_sk_x509_free(signers) }
        guard let used = TimeStampAndOCSP.certificates(signers).first else {
            throw CryptoError("the time-stamp token names no signer")
        }
        return used
    }

    /// `verify(imprint:)` with the hash of `data`, in the token's own imprint algorithm.
    @discardableResult
    public func verify(data: [UInt8], signer: Certificate? = nil) throws -> Certificate {
        try verify(imprint: Digest.hash(data, imprintAlgorithm), signer: signer)
    }

    private static func parse(_ der: [UInt8]) throws -> OpaquePointer {
        let cms = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_CMS_ContentInfo(nil, &cursor, buffer.count)
        }
        guard let cms else { throw CryptoError("not a DER time-stamp token") }
        guard OBJ_obj2nid(CMS_get0_type(cms)) == NID_pkcs7_signed,
              OBJ_obj2nid(CMS_get0_eContentType(cms)) == NID_id_smime_ct_TSTInfo else {
            CMS_ContentInfo_free(cms)
            throw CryptoError("the time-stamp token is not a SignedData holding a TSTInfo")
        }
        return cms
    }

    private static func tstInfo(_ cms: OpaquePointer) throws -> OpaquePointer {
        guard let content = CMS_get0_content(cms)?.pointee else { throw CryptoError("the time-stamp token holds no TSTInfo") }
        let bytes = TimeStampAndOCSP.bytes(content)
        let info = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_TS_TST_INFO(nil, &cursor, buffer.count)
        }
        guard let info else { throw CryptoError("the time-stamp token's TSTInfo cannot be read") }
        return info
    }
}

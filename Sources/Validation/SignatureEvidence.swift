import Crypto
import Foundation

/// What a signature's verdict rests on, kept for a validation report an auditor can check
/// again (ETSI TS 119 102-2): the signature value, the certificate chain to the trusted
/// certificate, and the time-stamp tokens and OCSP responses used. Only DER bytes and times.
public struct SignatureEvidence: Sendable, Codable {
    public struct TimeStamp: Sendable, Codable {
        public enum Role: String, Sendable, Codable {
            case signature, archive
            /// AllDataObjectsTimeStamp, IndividualDataObjectsTimeStamp.
            case allDataObjects, individualDataObjects
            /// An ASiC-S container's token (over the data file or an archive manifest).
            case container
        }
        public let role: Role
        public let token: [UInt8]
        public let time: Date
    }

    /// The decoded ds:SignatureValue (XAdES), nil for a time-stamp token or CAdES file.
    public var signatureValue: [UInt8]?
    /// The bytes that identify the signature (the SignatureValue, or a token's DER), for its digest.
    public var identifyingBytes: [UInt8] = []
    /// The signer's certificate first, then its issuers, up to the trusted one when trust found it.
    public var certificateChain: [[UInt8]] = []
    /// Whether the chain's last certificate is the trusted one (a trust anchor or a listed service).
    public var chainIsTrusted = false
    /// The time the signature is proven to exist at (time-stamp, or a time-mark's OCSP producedAt).
    public var provenTime: Date?
    public var timeStamps: [TimeStamp] = []
    public var ocspResponses: [[UInt8]] = []

    public init() {}

    mutating func trustedPath(_ path: [Certificate], from certificate: Certificate) {
        let chain = path.first?.der == certificate.der ? path : [certificate] + path
        certificateChain = chain.map(\.der)
        chainIsTrusted = true
    }
}

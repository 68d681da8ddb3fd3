import Foundation

/// What an OCSP response says about one certificate.
public struct OCSPSingleResponse: Sendable, Equatable {
    public enum Status: Sendable, Equatable {
        case good
        case revoked(at: Date, reason: OCSPRevocationReason?)
        case unknown
    }

    public let status: Status
    public let thisUpdate: Date
    public let nextUpdate: Date?
    /// The hash the responder used in the CertID (SHA-1 or SHA-256).
    public let certIDHash: DigestAlgorithm

    /// The freshness test of OpenSSL's OCSP_check_validity, with the clock passed in: thisUpdate
    /// at most `maxSkew` in the future and (when `maxAge` is given) at most `maxAge` in the past;
    /// nextUpdate, if present, at most `maxSkew` in the past and not before thisUpdate.
    /// The defaults (15 min, 2 min) are libdigidocpp's when it takes a fresh response.
    public func checkValidity(now: Date = Date(), maxSkew: TimeInterval = 15 * 60,
                              maxAge: TimeInterval? = 2 * 60) throws {
        if thisUpdate > now.addingTimeInterval(maxSkew) {
            throw CryptoError("the OCSP response is not yet valid (thisUpdate \(ISOTime.string(thisUpdate)) is in the future)")
        }
        if let maxAge, thisUpdate < now.addingTimeInterval(-maxAge) {
            throw CryptoError("the OCSP response is too old (thisUpdate \(ISOTime.string(thisUpdate)), at most \(Int(maxAge)) s allowed)")
        }
        guard let nextUpdate else { return }
        if nextUpdate < now.addingTimeInterval(-maxSkew) {
            throw CryptoError("the OCSP response has expired (nextUpdate \(ISOTime.string(nextUpdate)) has passed)")
        }
        if nextUpdate < thisUpdate {
            throw CryptoError("the OCSP response's nextUpdate is before its thisUpdate")
        }
    }
}

/// CRLReason (RFC 5280 §5.3.1).
public enum OCSPRevocationReason: Int, Sendable, CustomStringConvertible {
    case unspecified = 0, keyCompromise, cACompromise, affiliationChanged, superseded, cessationOfOperation,
         certificateHold, removeFromCRL = 8, privilegeWithdrawn, aACompromise

    public var description: String {
        switch self {
        case .unspecified: "unspecified"
        case .keyCompromise: "key compromise"
        case .cACompromise: "CA compromise"
        case .affiliationChanged: "affiliation changed"
        case .superseded: "superseded"
        case .cessationOfOperation: "cessation of operation"
        case .certificateHold: "certificate hold"
        case .removeFromCRL: "remove from CRL"
        case .privilegeWithdrawn: "privilege withdrawn"
        case .aACompromise: "AA compromise"
        }
    }
}

import Crypto
import Foundation

/// What the validator asks of trust: is this certificate's issuer a qualified CA, is this a
/// trusted time-stamping authority or OCSP responder, at this time? Trust lists and plain
/// anchors (the Trust module) answer it; tests may answer it too.
public protocol TrustAuthority: Sendable {
    func signerIssuer(of certificate: Certificate, intermediates: [Certificate], at time: Date) -> TrustAnswer
    func timeStampAuthority(_ certificate: Certificate, intermediates: [Certificate], at time: Date) -> TrustAnswer
    func ocspResponder(_ certificate: Certificate, intermediates: [Certificate], at time: Date) -> TrustAnswer
    func qualification(of certificate: Certificate, intermediates: [Certificate], at time: Date) -> QualificationAnswer
    /// Things to mention in every report (e.g. an expired trusted list).
    var notices: [String] { get }
}

public enum TrustAnswer: Sendable {
    /// Trusted; `path` runs from the certificate to the trusted one, `by` names the service or anchor.
    case trusted(path: [Certificate], by: String)
    case untrusted(String)
}

/// Whether a signer certificate is qualified (EU eIDAS) and kept on a qualified device.
public struct QualificationAnswer: Sendable, Equatable {
    public let isQualified: Bool
    public let isOnQSCD: Bool
    /// Why not, when either is false.
    public let reason: String?

    public init(isQualified: Bool, isOnQSCD: Bool, reason: String?) {
        self.isQualified = isQualified
        self.isOnQSCD = isOnQSCD
        self.reason = reason
    }

    public var label: String { isQualified ? (isOnQSCD ? "QES" : "AdES/QC") : "AdES" }
}

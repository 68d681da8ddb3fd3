import Crypto
import Foundation

/// What the trusted list said about a service at the time asked.
public struct ServiceAtTime: Sendable {
    public let providerName: String
    public let name: String
    /// The list that carries the service, e.g. `EE_T (sequence 34)`.
    public let listName: String
    /// Type, status, starting time and qualifiers in force at that time.
    public let period: ServicePeriod
}

/// A certificate trusted in a role at a time: the path that reaches trust, and what trusts it.
public struct TrustedPath: Sendable {
    public enum Source: Sendable {
        /// A trusted-list service whose status was granted at that time.
        case trustedList(ServiceAtTime)
        /// A configured trust anchor: trusted for every role at every time.
        case trustAnchor(Certificate)
    }

    public let role: TrustRole
    public let time: Date
    /// Leaf first; ends with the listed (or anchor) certificate.
    public let certificates: [Certificate]
    public let source: Source

    /// The TL qualifiers in force at that time (none for a trust anchor).
    public var qualifications: [QualificationElement] {
        if case .trustedList(let service) = source { return service.period.qualifications }
        return []
    }

    /// Qualification of the leaf certificate: its own statements, overridden by the list's qualifiers.
    public var qualification: Qualification {
        Qualification.of(certificates[0], qualifications: qualifications)
    }
}

/// Why a certificate is not trusted in a role at a time; `description` is the sentence to show.
public struct TrustFailure: Error, CustomStringConvertible, Sendable {
    public enum Reason: Sendable, Equatable {
        /// No trusted-list service and no trust anchor covers the certificate.
        case unknown
        /// The service was of another type at that time (e.g. CA/PKC when CA/QC is needed).
        case otherServiceType(TrustServiceType)
        /// The service's status at that time did not grant trust (withdrawn, revoked…).
        case notGranted(TrustServiceStatus)
        /// The service's history starts after that time.
        case notYetListed
        /// The service covers the certificate, but the path does not verify at that time.
        case pathInvalid(String)
    }

    public let role: TrustRole
    public let reason: Reason
    public let time: Date
    /// The service that covers the certificate, with its whole history (nil for `unknown`).
    public let service: TrustService?
    /// What that service's list said at that time (nil when it was not listed yet).
    public let period: ServicePeriod?
    /// When the service became trusted for the role after that time, if it ever did.
    public let grantedFrom: Date?
    public let description: String
}

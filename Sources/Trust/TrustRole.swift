/// The three questions validation asks of trust, each with the service types that answer it
/// (asice-xades.md §4: CA/QC for signers, TSA/QTST for time-stamps, CA/QC + Certstatus/OCSP/QC
/// for OCSP responses).
public enum TrustRole: Sendable, Equatable, CustomStringConvertible {
    /// The issuer of a signing certificate.
    case signerIssuer
    /// The signer of a time-stamp token.
    case timeStampAuthority
    /// The signer of an OCSP response: listed itself, or issued by a listed CA/QC.
    case ocspResponder

    /// The service types that trust a certificate in this role. Only the type in force at the
    /// time asked counts: a service that was CA/PKC then and is CA/QC now was not qualified then.
    public var serviceTypes: Set<TrustServiceType> {
        switch self {
        case .signerIssuer: [.qualifiedCA]
        case .timeStampAuthority: [.qualifiedTimeStamping]
        case .ocspResponder: [.qualifiedOCSP, .qualifiedCA]
        }
    }

    /// "a qualified CA (CA/QC)", for messages.
    public var wanted: String {
        switch self {
        case .signerIssuer: "a qualified CA (CA/QC)"
        case .timeStampAuthority: "a qualified time-stamping service (TSA/QTST)"
        case .ocspResponder: "a qualified OCSP responder (Certstatus/OCSP/QC) or qualified CA (CA/QC)"
        }
    }

    public var description: String {
        switch self {
        case .signerIssuer: "signer's issuer"
        case .timeStampAuthority: "time-stamping authority"
        case .ocspResponder: "OCSP responder"
        }
    }
}

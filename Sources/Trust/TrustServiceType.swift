/// A trusted-list service type (`ServiceTypeIdentifier`), e.g. `http://uri.etsi.org/TrstSvc/Svctype/CA/QC`.
public struct TrustServiceType: Sendable, Hashable, CustomStringConvertible {
    public let uri: String
    public init(uri: String) { self.uri = uri }

    static let prefix = "http://uri.etsi.org/TrstSvc/Svctype/"

    /// Issues qualified certificates: the issuer a signer certificate must chain to.
    public static let qualifiedCA = TrustServiceType(uri: prefix + "CA/QC")
    /// Issues certificates that are not qualified.
    public static let nonQualifiedCA = TrustServiceType(uri: prefix + "CA/PKC")
    /// Qualified time-stamping authority.
    public static let qualifiedTimeStamping = TrustServiceType(uri: prefix + "TSA/QTST")
    /// Qualified OCSP responder.
    public static let qualifiedOCSP = TrustServiceType(uri: prefix + "Certstatus/OCSP/QC")

    /// The part after `Svctype/` (`CA/QC`), which is how people name service types.
    public var description: String { uri.hasPrefix(Self.prefix) ? String(uri.dropFirst(Self.prefix.count)) : uri }
}

/// A trusted-list service status (`ServiceStatus`), e.g. `…/Svcstatus/granted`.
public struct TrustServiceStatus: Sendable, Hashable, CustomStringConvertible {
    public let uri: String
    public init(uri: String) { self.uri = uri }

    /// The statuses under which a service is trusted: TS 119 612 v2 `granted` and
    /// `recognisedatnationallevel`, and the v1 (Directive 1999/93) supervision and
    /// accreditation statuses that older history entries still carry.
    static let grantedNames: Set<String> = [
        "granted", "recognisedatnationallevel",
        "undersupervision", "supervisionincessation", "accredited", "setbynationallaw",
    ]

    public static let granted = TrustServiceStatus(uri: "http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted")
    public static let withdrawn = TrustServiceStatus(uri: "http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/withdrawn")

    /// True for a status that grants trust; withdrawn, revoked, ceased, deprecated and unknown
    /// statuses do not.
    public var isGranted: Bool {
        let known = ["http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/",
                     "http://uri.etsi.org/TrstSvc/eSigDir-1999-93-EC-TrustedList/Svcstatus/"]
        guard let base = known.first(where: { uri.hasPrefix($0) }) else { return false }
        return Self.grantedNames.contains(String(uri.dropFirst(base.count)))
    }

    /// The last path segment (`granted`, `withdrawn`, `supervisionrevoked`).
    public var description: String { uri.split(separator: "/").last.map(String.init) ?? uri }
}

import Crypto
import Foundation

/// What validation trusts: the services of the loaded trusted lists, each judged by its status
/// history at the time asked, plus plain trust anchors that are trusted for every role at every time.
///
/// A certificate is covered by a service when it is one of the service's certificates or is
/// issued by one, directly or through the given intermediates (libdigidocpp accepts only the
/// direct case; intermediates are for PKIs with one more level). The service must then have,
/// at the time asked, a type of the role (`TrustRole.serviceTypes`) and a granted status, and
/// the path must verify at that time. "At the time" means the history entry with the latest
/// StatusStartingTime at or before it, so a CA revoked then and granted again later does not count.
public struct TrustStore: Sendable {
    public let lists: [TrustedList]
    public let anchors: [Certificate]
    /// Things to tell the user that did not stop loading: expired lists, skipped national lists.
    public let warnings: [String]

    public init(lists: [TrustedList], anchors: [Certificate] = [], warnings: [String] = []) {
        self.lists = lists
        self.anchors = anchors
        self.warnings = warnings
    }

    /// Every certificate trust knows: anchors, then the services' certificates (a signer's issuer
    /// or a responder's certificate can be found here when a signature does not carry it).
    public var certificates: [Certificate] {
        anchors + lists.flatMap { $0.services.flatMap(\.certificates) }
    }

    /// Loads the configured lists (see `TrustedListLoader`); throws when the top list cannot be used.
    public static func load(_ settings: TrustSettings) throws(TrustedListError) -> TrustStore {
        var loader = TrustedListLoader(settings: settings)
        let lists = try loader.load()
        return TrustStore(lists: lists, anchors: settings.trustAnchors, warnings: loader.warnings)
    }

    /// Is `certificate` (a signer certificate) issued by a qualified CA granted at `time`? The
    /// validator asks at the certificate's notBefore and again at the time-stamp time.
    public func signerIssuer(of certificate: Certificate, intermediates: [Certificate] = [],
                             at time: Date) throws(TrustFailure) -> TrustedPath {
        try trust(certificate, as: .signerIssuer, intermediates: intermediates, at: time)
    }

    /// Is the time-stamp token's signer a qualified TSA (or issued by one) granted at genTime?
    public func timeStampAuthority(_ certificate: Certificate, intermediates: [Certificate] = [],
                                   at genTime: Date) throws(TrustFailure) -> TrustedPath {
        try trust(certificate, as: .timeStampAuthority, intermediates: intermediates, at: genTime)
    }

    /// Is the OCSP responder listed as qualified OCSP, or issued by a qualified CA, granted at producedAt?
    public func ocspResponder(_ certificate: Certificate, intermediates: [Certificate] = [],
                              at producedAt: Date) throws(TrustFailure) -> TrustedPath {
        try trust(certificate, as: .ocspResponder, intermediates: intermediates, at: producedAt)
    }

    /// The qualification of a signer certificate under the qualifiers in force at `time`; throws
    /// when its issuer is not trusted then.
    public func qualification(of certificate: Certificate, intermediates: [Certificate] = [],
                              at time: Date) throws(TrustFailure) -> Qualification {
        try signerIssuer(of: certificate, intermediates: intermediates, at: time).qualification
    }

    /// The one question behind the three above.
    public func trust(_ certificate: Certificate, as role: TrustRole, intermediates: [Certificate] = [],
                      at time: Date) throws(TrustFailure) -> TrustedPath {
        if !anchors.isEmpty, let path = try? CertificateChain.verify(certificate, intermediates: intermediates,
                                                                      anchors: anchors, at: time) {
            return TrustedPath(role: role, time: time, certificates: path, source: .trustAnchor(path.last ?? certificate))
        }
        let matches = coveringServices(of: certificate, intermediates: intermediates)
        guard !matches.isEmpty else {
            throw failure(role, .unknown, time, certificate: certificate, match: nil)
        }
        var failures: [TrustFailure] = []
        for match in matches {
            switch judge(certificate, as: role, by: match, intermediates: intermediates, at: time) {
            case .success(let path): return path
            case .failure(let failure): failures.append(failure)
            }
        }
        // Report the service closest to the role: one trusted for it later, then one that ever
        // had a type of the role, then the first.
        throw failures.first { $0.grantedFrom != nil }
            ?? failures.first { failure in
                failure.service?.periods.contains { role.serviceTypes.contains($0.type) } ?? false
            }
            ?? failures[0]
    }

    /// Whether one covering service trusts the certificate in the role at the time.
    private func judge(_ certificate: Certificate, as role: TrustRole, by match: Match, intermediates: [Certificate],
                       at time: Date) -> Result<TrustedPath, TrustFailure> {
        func fail(_ reason: TrustFailure.Reason) -> Result<TrustedPath, TrustFailure> {
            .failure(failure(role, reason, time, certificate: certificate, match: match))
        }
        guard let period = match.service.period(at: time) else { return fail(.notYetListed) }
        guard role.serviceTypes.contains(period.type) else { return fail(.otherServiceType(period.type)) }
        guard period.status.isGranted else { return fail(.notGranted(period.status)) }
        let path: [Certificate]
        do {
            path = try CertificateChain.verify(certificate, intermediates: intermediates, anchors: [match.listed], at: time)
        } catch {
            return fail(.pathInvalid("\(error)"))
        }
        let service = ServiceAtTime(providerName: match.service.providerName, name: match.service.name,
                                    listName: match.list.name, period: period)
        return .success(TrustedPath(role: role, time: time, certificates: path, source: .trustedList(service)))
    }

    /// A service certificate that is the certificate or issued it (or one of its intermediates).
    struct Match {
        let list: TrustedList
        let service: TrustService
        let listed: Certificate
    }

    /// The services covering the certificate at the nearest level of its path: the certificate
    /// itself, then its issuer among the intermediates, and so on.
    func coveringServices(of certificate: Certificate, intermediates: [Certificate]) -> [Match] {
        var current = certificate
        var seen: [Certificate] = [certificate]
        while true {
            var matches: [Match] = []
            for list in lists {
                for service in list.services {
                    for listed in service.certificates where listed == current || current.isIssued(by: listed) {
                        matches.append(Match(list: list, service: service, listed: listed))
                    }
                }
            }
            if !matches.isEmpty { return matches }
            guard let issuer = intermediates.first(where: { candidate in
                !seen.contains { $0 == candidate } && current.isIssued(by: candidate)
            }) else { return [] }
            seen.append(issuer)
            current = issuer
        }
    }

    private func failure(_ role: TrustRole, _ reason: TrustFailure.Reason, _ time: Date,
                         certificate: Certificate, match: Match?) -> TrustFailure {
        let period = match?.service.period(at: time)
        let grantedFrom = match?.service.periods.reversed().first {
            $0.start > time && role.serviceTypes.contains($0.type) && $0.status.isGranted
        }?.start
        let subject = Self.subject(role, certificate: certificate, listed: match?.listed)
        let at = XMLDateTime.format(time)
        let later = grantedFrom.map { "; it is trusted for this only from \(XMLDateTime.format($0))" } ?? ""
        let sentence: String
        switch reason {
        case .unknown:
            sentence = "\(subject) is unknown: no trusted list lists it and it is no trust anchor"
        case .otherServiceType(let type):
            sentence = "\(subject) is not \(role.wanted) in the trusted list at \(at): it is listed as \(type)\(later)"
        case .notGranted(let status):
            let since = period.map { " since \(XMLDateTime.format($0.start))" } ?? ""
            sentence = "\(subject) was not granted at \(at): its trusted-list status was \(status)\(since)\(later)"
        case .notYetListed:
            sentence = "\(subject) was not granted at \(at): the trusted list has no status for it before"
                + (grantedFrom.map { " \(XMLDateTime.format($0))" } ?? " then")
        case .pathInvalid(let why):
            sentence = "\(subject) is listed, but the certificate does not verify against it at \(at): \(why)"
        }
        return TrustFailure(role: role, reason: reason, time: time, service: match?.service, period: period,
                            grantedFrom: grantedFrom, description: sentence)
    }

    /// "issuer TEST of ESTEID-SK 2011", "time-stamping authority DEMO of SK TSA 2014", …
    static func subject(_ role: TrustRole, certificate: Certificate, listed: Certificate?) -> String {
        switch role {
        case .signerIssuer:
            return "issuer " + (listed?.displayName ?? certificate.issuerCommonName ?? certificate.issuerLine)
        case .timeStampAuthority, .ocspResponder:
            let own = "\(role) \(certificate.displayName)"
            guard let listed, !(listed == certificate) else { return own }
            return own + " (issued by \(listed.displayName))"
        }
    }
}

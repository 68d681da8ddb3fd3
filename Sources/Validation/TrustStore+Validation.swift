import Crypto
import Foundation
import Trust

/// The Trust module's store answers the validator's questions.
extension TrustStore: TrustAuthority, CertificateSource {
    public func signerIssuer(of certificate: Certificate, intermediates: [Certificate], at time: Date) -> TrustAnswer {
        answer { () throws(TrustFailure) in try signerIssuer(of: certificate, intermediates: intermediates, at: time) }
    }

    public func timeStampAuthority(_ certificate: Certificate, intermediates: [Certificate], at time: Date) -> TrustAnswer {
        answer { () throws(TrustFailure) in try timeStampAuthority(certificate, intermediates: intermediates, at: time) }
    }

    public func ocspResponder(_ certificate: Certificate, intermediates: [Certificate], at time: Date) -> TrustAnswer {
        answer { () throws(TrustFailure) in try ocspResponder(certificate, intermediates: intermediates, at: time) }
    }

    public func qualification(of certificate: Certificate, intermediates: [Certificate], at time: Date) -> QualificationAnswer {
        do {
            let qualification = try signerIssuer(of: certificate, intermediates: intermediates, at: time).qualification
            return QualificationAnswer(isQualified: qualification.isQCCompliant || qualification.isESeal,
                                       isOnQSCD: qualification.isQSCD || qualification.isESeal,
                                       reason: qualification.meetsRequirements ? nil : qualification.reasons.joined(separator: "; "))
        } catch {
            return QualificationAnswer(isQualified: false, isOnQSCD: false, reason: error.description)
        }
    }

    public var notices: [String] { warnings }

    public var knownCertificates: [Certificate] {
        anchors + lists.flatMap { $0.services.flatMap(\.certificates) }
    }

    private func answer(_ body: () throws(TrustFailure) -> TrustedPath) -> TrustAnswer {
        do {
            let path = try body()
            switch path.source {
            case .trustedList(let service): return .trusted(path: path.certificates, by: "\(service.name) (\(service.listName))")
            case .trustAnchor(let anchor): return .trusted(path: path.certificates, by: "trust anchor \(anchor.commonName ?? anchor.subjectLine)")
            }
        } catch {
            return .untrusted(error.description)
        }
    }
}

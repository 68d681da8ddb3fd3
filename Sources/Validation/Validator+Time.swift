import ASiC
import Crypto
import Foundation
import XAdES

/// The time-stamp, OCSP and time-mark checks, and ASiC-S time-stamp tokens.
extension Validator {
    /// T level: exactly one SignatureTimeStamp over C14N(SignatureValue), signed by a trusted TSA.
    /// Returns its time when the token itself is sound.
    func checkTimeStamp(_ signature: XAdESSignature, _ report: inout SignatureReport) -> Date? {
        guard signature.signatureTimeStamps.count == 1, let stamp = signature.signatureTimeStamps.first else {
            report.add(.invalid, .timestamp, "the signature must hold exactly one SignatureTimeStamp, not \(signature.signatureTimeStamps.count)")
            return nil
        }
        guard stamp.tokenCount == 1 else {
            report.add(.invalid, .timestamp, "the SignatureTimeStamp must hold exactly one time-stamp token, not \(stamp.tokenCount)")
            return nil
        }
        let token: TimeStampToken
        do { token = try TimeStampToken(der: stamp.token) } catch {
            report.add(.invalid, .timestamp, "the time-stamp cannot be read: \(error)")
            return nil
        }
        report.timeStampTime = token.genTime
        report.timeStampAuthority = token.signerCertificate.map { $0.commonName ?? $0.subjectLine }
        if token.imprintAlgorithm.isWeak {
            report.add(.warning, .weakDigest, "the time-stamp uses the weak \(token.imprintAlgorithm.rawValue) hash")
        }
        let tsa: Certificate
        do {
            let covered = try signature.canonicalSignatureValue(stamp.canonicalizationURI)
            tsa = try token.verify(data: covered)
        } catch {
            report.add(.invalid, .timestamp, "the time-stamp does not verify: \(error)")
            return nil
        }
        report.evidence.timeStamps.append(.init(role: .signature, token: stamp.token, time: token.genTime))
        checkTimeStampAuthority(tsa, token: token, others: signature.certificateValues, &report)
        return token.genTime
    }

    func checkTimeStampAuthority(_ tsa: Certificate, token: TimeStampToken, others: [Certificate], _ report: inout SignatureReport) {
        if !tsa.extendedKeyUsages.contains("1.3.6.1.5.5.7.3.8") {
            report.add(.invalid, .timestamp, "the time-stamp was signed by a certificate that is not for time-stamping")
        }
        guard let trust else {
            report.add(.indeterminate, .noTrust, noTrust)
            return
        }
        switch trust.timeStampAuthority(tsa, intermediates: token.certificates + others, at: token.genTime) {
        case .untrusted(let why):
            report.add(.indeterminate, .tsaNotTrusted,
                       "the time-stamping authority \(tsa.commonName ?? tsa.subjectLine) is not trusted at \(ISOTime.string(token.genTime)): \(why)")
        case .trusted(let path, _):
            // A container's token is its own signature: its chain is the TSA's (a XAdES report keeps the signer's).
            if report.evidence.signatureValue == nil { report.evidence.trustedPath(path, from: tsa) }
        }
    }

    /// LT level: an OCSP response for the signer, from a trusted responder, made after the time-stamp.
    func checkRevocation(_ signature: XAdESSignature, certificate: Certificate, others: [Certificate], timeStamp: Date,
                         _ report: inout SignatureReport) {
        guard !signature.ocspValues.isEmpty else {
            report.add(.indeterminate, .noRevocation,
                       "the signature has no OCSP response (profile T, not LT): the certificate's status at signing time is not proven")
            return
        }
        guard let outcome = bestOCSP(signature, certificate: certificate, others: others, &report) else { return }
        guard let producedAt = outcome.producedAt else { return }
        if producedAt < timeStamp {
            report.add(.invalid, .ocspBeforeTimestamp,
                       "the OCSP response (\(ISOTime.string(producedAt))) is older than the time-stamp (\(ISOTime.string(timeStamp))): TimeStamp time is greater than OCSP producedAt")
        } else if producedAt.timeIntervalSince(timeStamp) > Self.ocspLateness {
            report.add(.warning, .ocspLate,
                       "the OCSP response was made more than 15 minutes after the time-stamp (\(ISOTime.string(producedAt)))")
        }
    }

    /// TM level (legacy BDOC): the OCSP response's nonce is the DigestInfo of the SignatureValue,
    /// and its producedAt is the signing time. Returns that time when sound.
    func checkTimeMark(_ signature: XAdESSignature, certificate: Certificate, others: [Certificate],
                       _ report: inout SignatureReport) -> Date? {
        guard let outcome = bestOCSP(signature, certificate: certificate, others: others, &report),
              let producedAt = outcome.producedAt else { return nil }
        // As libdigidocpp: only a time-mark responder makes a time-mark. An untrusted responder's
        // policy proves nothing either way: it is INDETERMINATE (ocsp-not-trusted) then, not INVALID.
        if outcome.responderIsTrusted, let responder = outcome.responder,
           !timeMarkPolicies.contains(where: responder.policies.contains) {
            report.add(.invalid, .timeMark, "the OCSP responder's certificate does not name the time-mark policy "
                + "\(timeMarkPolicies.joined(separator: " or ")) (ocsp-tm-policy), so its answer is no time-mark")
        }
        guard let nonce = outcome.response.nonce, Self.nonceCovers(nonce, signature.signatureValue) else {
            report.add(.invalid, .timeMark, "the OCSP nonce does not match the signature value (not a time-mark of this signature)")
            return nil
        }
        return producedAt
    }

    struct OCSPOutcome {
        let response: OCSPResponse
        let responder: Certificate?
        /// A trust authority trusts the responder at the response's production time.
        var responderIsTrusted = false
        var producedAt: Date? { response.producedAt }
    }

    /// The first OCSP response that is about the signer and verifies; its status decides.
    func bestOCSP(_ signature: XAdESSignature, certificate: Certificate, others: [Certificate],
                  _ report: inout SignatureReport) -> OCSPOutcome? {
        var problems: [String] = []
        let issuers = (others + (trustedCertificates ?? [])).filter { certificate.isIssued(by: $0) }
        for der in signature.ocspValues {
            let response: OCSPResponse
            do { response = try OCSPResponse(der: der) } catch {
                // Broken bytes are broken data, whatever the other responses say (as the reference reads it).
                report.add(.invalid, .ocsp, "an OCSP response of the signature is damaged: \(error)")
                return nil
            }
            guard let single = issuers.lazy.compactMap({ response.singleResponse(for: certificate, issuer: $0) }).first else {
                problems.append(issuers.isEmpty ? "the issuer of the signer's certificate is unknown, so the OCSP response cannot be matched"
                                                : "an OCSP response is not about the signer's certificate")
                continue
            }
            let candidates = [response.responderCertificate].compactMap { $0 } + response.certificates + others
            guard let responder = candidates.first(where: { response.verifySignature(with: $0) }) else {
                problems.append("the OCSP response's signature does not verify with any responder certificate")
                continue
            }
            report.ocspProducedAt = response.producedAt
            report.evidence.ocspResponses.append(der)
            report.ocspResponder = responder.commonName ?? responder.subjectLine
            switch single.status {
            case .good: break
            case .revoked(let time, let reason):
                report.add(.invalid, .revoked, "the signer's certificate was revoked at \(ISOTime.string(time))" + (reason.map { " (\($0))" } ?? ""))
            case .unknown:
                report.add(.indeterminate, .ocspUnknown, "the OCSP responder does not know the signer's certificate")
            }
            var outcome = OCSPOutcome(response: response, responder: responder)
            if let producedAt = response.producedAt {
                if let trust {
                    switch trust.ocspResponder(responder, intermediates: response.certificates + others, at: producedAt) {
                    case .trusted: outcome.responderIsTrusted = true
                    case .untrusted(let why):
                        report.add(.indeterminate, .ocspNotTrusted,
                                   "OCSP responder not trusted: \(responder.commonName ?? responder.subjectLine) at \(ISOTime.string(producedAt)): \(why)")
                    }
                } else {
                    report.add(.indeterminate, .noTrust, noTrust)
                }
            }
            return outcome
        }
        report.add(.indeterminate, .ocsp, problems.first ?? "no usable OCSP response")
        return nil
    }

    /// Certificates the trust authority knows (to find the signer's issuer for OCSP matching).
    var trustedCertificates: [Certificate]? { (trust as? CertificateSource)?.knownCertificates }

    /// BDOC 2.1 nonces are a DigestInfo of the SignatureValue's hash (parsed as ASN.1: the
    /// algorithm's NULL parameter may be left out); BDOC 1.0 ones the bare hash.
    static func nonceCovers(_ nonce: [UInt8], _ signatureValue: [UInt8]) -> Bool {
        if let (algorithm, digest) = DigestInfo.parse(nonce) { return Digest.hash(signatureValue, algorithm) == digest }
        return DigestAlgorithm.allCases.contains { $0.length == nonce.count && Digest.hash(signatureValue, $0) == nonce }
    }

}

/// A trust authority that can also list the certificates it knows.
public protocol CertificateSource {
    var knownCertificates: [Certificate] { get }
}

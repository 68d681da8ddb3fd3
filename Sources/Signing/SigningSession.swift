import ASiC
import Crypto
import Foundation
import HTTP
import Validation
import XAdES

/// The result of a signing that succeeded: the new container snapshot and what validation says
/// of the new signature.
public struct SigningOutcome: Sendable {
    public let container: Container
    public let signatureFile: String
    public let signatureId: String
    public let report: SignatureReport
    /// Findings the configured profile makes on purpose (profile B: `no-timestamp`).
    public var expectedFindings: Set<FindingCode> = []

    /// The verdict apart from what the profile asked for: INVALID here means a broken signature.
    public var unexpectedVerdict: Verdict { report.verdict(ignoring: expectedFindings) }

    /// One line for `status/wait` and the command line (the signer's name comes from a
    /// certificate: escaped like every name, `PrintableText`).
    public var summary: String {
        PrintableText.escaped(
            "signed: \(report.signerName ?? "signature") \(signatureId) in \(signatureFile), \(report.verdict.rawValue)"
                + (report.findings.isEmpty ? "" : " (" + report.findings.map(\.message).joined(separator: "; ") + ")"))
    }
}

/// One signing, the same for every method: certificate → SignedInfo and SignedProperties →
/// digest → the signer signs → time-stamp → OCSP → the signature file, written atomically. Any
/// failure before the last step leaves the container exactly as it was.
public final class SigningSession: @unchecked Sendable {
    let container: Container
    let signer: Signer
    let environment: SignatureEnvironment
    let details: SignerDetails
    let cancellation: Cancellation

    public init(container: Container, signer: Signer, environment: SignatureEnvironment,
                details: SignerDetails = SignerDetails(), cancellation: Cancellation = Cancellation()) {
        self.container = container
        self.signer = signer
        self.environment = environment
        self.details = details
        self.cancellation = cancellation
    }

    public func run(events: (SigningEvent) -> Void) throws -> SigningOutcome {
        guard container.kind == .asicE else {
            throw SigningError("this is an ASiC-S container; asicfs signs ASiC-E containers only")
        }
        guard !container.dataFiles.isEmpty else { throw SigningError("the container has no data files to sign") }
        guard container.isCurrentOnDisk else {
            throw SigningError("the container was changed by another program since asicfs read it; nothing was written")
        }

        events(.step("reading the signer's certificate"))
        let certificate: Certificate
        do { certificate = try signer.certificate(events: events) } catch {
            try checkCancelled()
            throw error
        }
        try checkCertificate(certificate)
        try checkCancelled()

        events(.step("computing the digests of \(container.dataFiles.count) data file\(container.dataFiles.count == 1 ? "" : "s")"))
        let files = try container.dataFiles.map { file in
            SignedDataFile(name: file.name, mediaType: file.mediaType, sha256: try DataFileDigest.sha256(of: file.name, in: container))
        }
        try checkCancelled()

        let id = newSignatureId()
        let algorithm = signer.algorithm(for: certificate)
        let builder = SignatureBuilder(id: id, certificate: certificate, algorithm: algorithm, files: files,
                                       signingTime: Date(), details: details)
        let prepared: PreparedSignature
        do { prepared = try builder.prepare() } catch { throw SigningError("could not build the signature: \(error)") }

        events(.step("signing"))
        let value: [UInt8]
        do { value = try signer.sign(digest: prepared.digestToSign, algorithm: algorithm, events: events) } catch {
            try checkCancelled()
            throw error
        }
        guard prepared.verify(signatureValue: value) else {
            throw SigningError("the signature value returned by \(signer.method) does not verify with the signer's certificate")
        }
        try checkCancelled()

        var document = prepared.document(signatureValue: value)
        if environment.profile == .lt {
            document = try longTermDocument(prepared, value: value, certificate: certificate, events: events)
        }
        try checkCancelled()

        events(.step("checking the new signature"))
        let fileName = container.nextSignatureFileName
        let report = try checkNewSignature(document, file: fileName, files: files)

        events(.step("saving the container"))
        let saved: Container
        do {
            saved = try container.savingSignatures(adding: [(fileName, document)])
        } catch {
            throw SigningError("could not save the container: \(error)")
        }
        return SigningOutcome(container: saved, signatureFile: fileName, signatureId: id, report: report,
                              expectedFindings: expectedFindings)
    }

    // MARK: - Steps

    /// Refuses certificates no validator would accept, before the user is asked for anything.
    func checkCertificate(_ certificate: Certificate) throws {
        let name = certificate.commonName ?? certificate.subjectLine
        guard certificate.hasNonRepudiation else {
            throw SigningError("the certificate of \(name) is not for signing (its key usage lacks non-repudiation)")
        }
        let now = Date()
        if let notAfter = certificate.notAfter, notAfter < now {
            throw SigningError("the certificate of \(name) expired on \(ISOTime.string(notAfter))")
        }
        if let notBefore = certificate.notBefore, notBefore > now {
            throw SigningError("the certificate of \(name) is not valid before \(ISOTime.string(notBefore))")
        }
    }

    /// T: a time-stamp over the canonical SignatureValue; LT: OCSP for the signer after it.
    func longTermDocument(_ prepared: PreparedSignature, value: [UInt8], certificate: Certificate,
                          events: (SigningEvent) -> Void) throws -> [UInt8] {
        let http = try environment.httpClient(cancellation: cancellation)
        events(.step("time-stamping at \(environment.tsaURL)"))
        let imprint = Digest.hash(try prepared.canonicalSignatureValue(value), .sha256)
        let token: TimeStampToken
        do {
            token = try TimeStampClient(url: environment.tsaURL, post: http.post).stamp(digest: imprint, algorithm: .sha256)
        } catch {
            try checkCancelled()
            throw SigningError("time-stamp: \(error)")
        }
        try checkCancelled()

        let issuer = try issuerCertificate(of: certificate)
        guard let ocspURL = environment.ocspURL ?? certificate.ocspURLs.first else {
            throw SigningError("the certificate names no OCSP responder; set ocsp-url in the configuration")
        }
        events(.step("checking the certificate's status at \(ocspURL)"))
        let response: OCSPResponse
        do {
            response = try OCSPClient(url: ocspURL, post: http.post).fetch(certificate: certificate, issuer: issuer)
        } catch {
            try checkCancelled()
            throw SigningError("OCSP: \(error)")
        }
        let name = certificate.commonName ?? certificate.subjectLine
        // The answer must be signed by the responder it names (or by a certificate asicfs knows),
        // and fresh: at most 15 minutes ahead of this clock and 2 minutes old, as libdigidocpp takes it.
        let responders = [response.responderCertificate].compactMap { $0 } + response.certificates + [issuer]
            + environment.knownCertificates()
        guard responders.contains(where: { response.verifySignature(with: $0) }) else {
            throw SigningError("the OCSP response from \(ocspURL) is not signed by its responder")
        }
        let single = response.singleResponse(for: certificate, issuer: issuer)
        do { try single?.checkValidity() } catch { throw SigningError("OCSP from \(ocspURL): \(error)") }
        switch single?.status {
        case .good?: break
        case .revoked(let time, _)?:
            throw SigningError("the certificate of \(name) is revoked (since \(ISOTime.string(time)), says \(ocspURL))")
        case .unknown?: throw SigningError("the OCSP responder \(ocspURL) does not know the certificate of \(name)")
        case nil: throw SigningError("the OCSP response from \(ocspURL) does not cover the certificate of \(name)")
        }
        return prepared.document(signatureValue: value, timeStamp: token.der, certificates: [issuer],
                                 ocspResponses: [response.der])
    }

    /// The CA certificate that issued `certificate`: from the signer, the trust anchors or the trusted list.
    func issuerCertificate(of certificate: Certificate) throws -> Certificate {
        let candidates = signer.extraCertificates + environment.knownCertificates()
        if let issuer = candidates.first(where: { certificate.isIssued(by: $0) }) { return issuer }
        throw SigningError("the issuer of the signer's certificate (\(certificate.issuerCommonName ?? certificate.issuerLine)) "
            + "is unknown: add its certificate to trust-anchors, or configure a trusted list (tsl) that lists it")
    }

    /// Validates the new signature before it is written: a signature asicfs itself would call
    /// INVALID is never saved.
    func checkNewSignature(_ document: [UInt8], file: String, files: [SignedDataFile]) throws -> SignatureReport {
        let validator = environment.validator()
        let report = validator.validateNew(signatureFile: file, bytes: document, in: container,
                                           sha256: Dictionary(files.map { ($0.name, $0.sha256) }, uniquingKeysWith: { a, _ in a }))
        if report.verdict(ignoring: expectedFindings) == .invalid {
            throw SigningError("the new signature does not validate, nothing was written: "
                + report.errors.map(\.message).joined(separator: "; "))
        }
        return report
    }

    /// Profile B is INVALID by the Estonian rules (not long-term), but it is what was configured:
    /// that finding alone does not stop the signing.
    var expectedFindings: Set<FindingCode> { environment.profile == .b ? [.noTimestamp] : [] }

    /// `S<n>` with the lowest n no signature of the container uses.
    func newSignatureId() -> String {
        var taken = Set<String>()
        for file in container.signatureFiles {
            if let bytes = try? container.signatureBytes(file), let signatures = try? XAdESSignature.parse(file: file.name, bytes: bytes) {
                taken.formUnion(signatures.compactMap(\.id))
            }
        }
        var n = 0
        while taken.contains("S\(n)") { n += 1 }
        return "S\(n)"
    }

    func checkCancelled() throws {
        if cancellation.isCancelled { throw SigningError("the signing was cancelled; the container is unchanged") }
    }
}

/// SHA-256 of a data file: known from this process's own save, or streamed out of the
/// container (CRC-checked on the way) and remembered.
public enum DataFileDigest {
    public static func sha256(of name: String, in container: Container) throws -> [UInt8] {
        try container.sha256(of: name)
    }
}

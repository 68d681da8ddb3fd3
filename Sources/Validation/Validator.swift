import ASiC
import Crypto
import Foundation
import XAdES

/// Validates every signature of a container (asice-xades.md §4, libdigidocpp's order): the
/// XML-DSig core, the data files, the signing certificate and its trust, the time-stamp, the
/// OCSP response. Each problem becomes a finding; the worst one decides the verdict.
public final class Validator: @unchecked Sendable {
    let trust: TrustAuthority?
    let trustProblem: String?
    /// OCSP produced this long after the time-stamp is still fine, later is a warning (libdigidocpp: 15 min).
    static let ocspLateness: TimeInterval = 15 * 60
    static let bdocPolicies = ["urn:oid:1.3.6.1.4.1.10015.1000.3.2.1", "urn:oid:1.3.6.1.4.1.10015.1000.3.2.3"]
    /// A time-mark OCSP responder certificate carries this policy (BDOC 2.1)...
    public static let timeMarkResponderPolicy = "1.3.6.1.4.1.10015.4.1.2"
    /// ...and SK's test responders this one (libdigidocpp's test configuration accepts it).
    public static let testTimeMarkResponderPolicy = "1.3.6.1.4.1.10015.3.1.1"
    /// The policies that make an OCSP responder's answer a time-mark (`ocsp-tm-policy`).
    let timeMarkPolicies: [String]

    /// Why nothing is trusted: none is configured, or what is configured could not be loaded.
    var noTrust: String {
        trustProblem.map { "no trust is available: \($0)" } ?? "no trust is configured: set tsl or trust-anchors"
    }

    public init(trust: TrustAuthority?, trustProblem: String? = nil, timeMarkPolicies: [String] = [Validator.timeMarkResponderPolicy]) {
        self.trust = trust
        self.trustProblem = trustProblem
        self.timeMarkPolicies = timeMarkPolicies
    }

    public func validate(_ container: Container) -> ContainerReport {
        var report = ContainerReport(path: container.path, format: container.kind.rawValue,
                                     dataFiles: container.dataFiles.map(\.name), signatures: [])
        let digests = DigestCache(container: container)
        var index = 0
        // ASiC-S tokens and archive manifests are checked together (each token covers the data
        // file or a manifest that lists the earlier ones).
        var timeStamps: [TimeStampFile] = []
        var archiveManifests: [TimeStampFile] = []
        for file in container.signatureFiles {
            let bytes: [UInt8]
            do { bytes = try container.signatureBytes(file) } catch {
                var broken = SignatureReport(index: index, file: file.name, id: nil)
                broken.add(.invalid, .unreadable, "\(file.name) cannot be read: \(error)")
                report.signatures.append(broken)
                index += 1
                continue
            }
            if container.kind == .asicS && file.name.hasSuffix(".tst") {
                timeStamps.append(TimeStampFile(name: file.name, bytes: bytes))
                continue
            }
            if container.kind == .asicS && Container.isArchiveManifest(file.name) {
                archiveManifests.append(TimeStampFile(name: file.name, bytes: bytes))
                continue
            }
            // CAdES-style shapes: a .p7s signature, or an ASiC-E time-stamp container's token
            // (over an ASiCManifest), which is no XAdES document either.
            if file.name.hasSuffix(".p7s") || (container.kind == .asicE && file.name.hasSuffix(".tst")) {
                report.signatures.append(Self.unsupported(file.name, index: index, bytes: bytes))
                index += 1
                continue
            }
            do {
                for signature in try XAdESSignature.parse(file: file.name, bytes: bytes) {
                    report.signatures.append(validate(signature, index: index, container: container, digests: digests))
                    index += 1
                }
            } catch {
                var broken = SignatureReport(index: index, file: file.name, id: nil)
                broken.add(.invalid, .unreadable, "\(error)")
                report.signatures.append(broken)
                index += 1
            }
        }
        if !timeStamps.isEmpty || !archiveManifests.isEmpty {
            report.signatures += validateASiCSTimeStamps(timeStamps, manifests: archiveManifests, firstIndex: index,
                                                         container: container, digests: digests)
        }
        return report
    }

    /// A CAdES signature or an ASiC-E time-stamp token: reported, not validated.
    static func unsupported(_ name: String, index: Int, bytes: [UInt8]) -> SignatureReport {
        var report = SignatureReport(index: index, file: name, id: nil)
        report.evidence.identifyingBytes = bytes
        let isToken = name.hasSuffix(".tst")
        report.kind = isToken ? "TimeStampToken" : "CAdES"
        report.add(.indeterminate, .unsupportedFormat,
                   (isToken ? "ASiC-E time-stamp tokens" : "CAdES signatures") + " (\(name)) are not validated by asicfs")
        return report
    }

    /// Validates a signature document that is not in the container yet (a signing's self-check).
    /// `sha256` holds data-file digests the caller already computed, so big files are not read twice.
    public func validateNew(signatureFile: String, bytes: [UInt8], in container: Container,
                            sha256: [String: [UInt8]] = [:]) -> SignatureReport {
        guard let signature = try? XAdESSignature.parse(file: signatureFile, bytes: bytes).first else {
            var broken = SignatureReport(index: 0, file: signatureFile, id: nil)
            broken.add(.invalid, .unreadable, "the new signature document cannot be read back")
            return broken
        }
        let digests = DigestCache(container: container)
        for (name, digest) in sha256 { digests.remember(digest, of: name, .sha256) }
        return validate(signature, index: container.signatureFiles.count, container: container, digests: digests)
    }

    // MARK: - One XAdES signature

    func validate(_ signature: XAdESSignature, index: Int, container: Container, digests: DigestCache) -> SignatureReport {
        var report = SignatureReport(index: index, file: signature.file, id: signature.id)
        report.profile = signature.profile
        report.claimedSigningTime = signature.signingTime
        report.signatureMethod = signature.signatureAlgorithm?.description ?? signature.signatureMethodURI
        report.roles = signature.claimedRoles
        report.productionPlace = signature.productionPlace
        report.signedFiles = signature.dataReferences.map(\.dataFileName)
        report.evidence.signatureValue = signature.signatureValue
        report.evidence.identifyingBytes = signature.signatureValue
        let certificate = signature.signingCertificate
        if let certificate {
            report.evidence.certificateChain = [certificate.der]
            report.signerName = certificate.commonName ?? certificate.subjectLine
            report.personalCode = certificate.serialNumberAttribute
            report.country = certificate.country
            report.issuer = certificate.issuerCommonName ?? certificate.issuerLine
            report.certificateSerial = certificate.serialDecimal
            report.certificateNotAfter = certificate.notAfter
        }
        for problem in signature.structuralProblems { report.add(.invalid, .structure, problem) }
        for notice in trust?.notices ?? [] { report.add(.warning, .trustedList, notice) }

        checkCore(signature, &report)
        checkDataFiles(signature, container: container, digests: digests, &report)
        guard let certificate else { return report }
        if !certificate.hasNonRepudiation {
            report.add(.invalid, .keyUsage, "the signer's certificate is not for signatures (no non-repudiation key usage)")
        }
        let others = signature.certificateValues + Array(signature.keyInfoCertificates.dropFirst())

        // B level: the certificate's issuer was trusted when the certificate was issued.
        if let notBefore = certificate.notBefore {
            checkSignerTrust(certificate, others: others, at: notBefore, when: "when the certificate was issued", &report)
        }
        var trustedTime: Date? = nil
        if signature.isTimeMark {
            trustedTime = checkTimeMark(signature, certificate: certificate, others: others, &report)
        } else if !signature.signatureTimeStamps.isEmpty {
            trustedTime = checkTimeStamp(signature, &report)
            if let trustedTime {
                checkRevocation(signature, certificate: certificate, others: others, timeStamp: trustedTime, &report)
            }
        } else {
            // Profile B: the Estonian references (libdigidocpp, SiVa's policy) pass only T, LT and LTA.
            report.add(.invalid, .noTimestamp,
                       "no time-stamp and no revocation data: not a long-term signature (profile B: when it was made and whether the certificate was valid then cannot be proven)")
        }
        report.evidence.provenTime = trustedTime
        checkContentTimeStamps(signature, container: container, others: others, signedBy: trustedTime, &report)
        if let trustedTime {
            if !certificate.isValid(at: trustedTime) {
                report.add(.invalid, .certificateExpired,
                           "the signer's certificate was not valid at the signing time \(ISOTime.string(trustedTime))")
            }
            checkSignerTrust(certificate, others: others, at: trustedTime, when: "at the signing time", &report)
            checkQualification(certificate, others: others, at: trustedTime, &report)
        }
        checkArchiveTimeStamps(signature, container: container, others: others, &report)
        return report
    }

    /// SignatureValue, SignedProperties, the signing-certificate reference, algorithms, policy.
    func checkCore(_ signature: XAdESSignature, _ report: inout SignatureReport) {
        if signature.canonicalization == nil {
            report.add(.invalid, .canonicalization, "unsupported canonicalization method \(signature.canonicalizationURI)")
        }
        if let algorithm = signature.signatureAlgorithm, algorithm.digest.isWeak {
            report.add(.warning, .weakDigest, "the signature uses the weak \(algorithm.digest.rawValue) hash")
        }
        if let problem = signature.signedPropertiesProblem() { report.add(.invalid, .signedProperties, problem) }
        if let problem = signature.signatureValueProblem() { report.add(.invalid, .signatureValue, problem) }
        if let problem = signature.signingCertificateReferenceProblem() { report.add(.invalid, .signingCertificate, problem) }
        if signature.hasExplicitAndImpliedPolicy {
            // One or the other (EN 319 132-1 5.2.9); digidoc4j refuses both.
            report.add(.invalid, .policy, "the signature policy is both explicit (SignaturePolicyId) and implied (SignaturePolicyImplied)")
        }
        if signature.isTimeMark || signature.policyIdentifier != nil {
            if let policy = signature.policyIdentifier, !Self.bdocPolicies.contains(policy) {
                report.add(.invalid, .policy, "Signature policy does not match BDOC 2.1 policy (\(policy))")
            } else if signature.isTimeMark && signature.policyIdentifier == nil {
                report.add(.invalid, .policy, "a time-mark signature needs the BDOC 2.1 signature policy")
            }
            if signature.policyIdentifier != nil && (signature.policySPURI ?? "").isEmpty {
                report.add(.invalid, .policy, signature.policySPURI == nil ? "the signature policy has no SPURI" : "the signature policy's SPURI is empty")
            }
        }
    }

    /// Every data reference matches a data file and its bytes; every data file is covered.
    func checkDataFiles(_ signature: XAdESSignature, container: Container, digests: DigestCache, _ report: inout SignatureReport) {
        if !signature.hasSignedDataObjectProperties {
            report.add(.invalid, .dataObjectFormats, "SignedDataObjectProperties is missing")
        }
        let references = signature.dataReferences
        if references.isEmpty { report.add(.invalid, .noDataFiles, "the signature covers no data files") }
        var covered = Set<String>()
        for reference in references {
            guard !reference.uri.isEmpty else {
                report.add(.invalid, .reference, "a reference has an empty URI")
                continue
            }
            if reference.id == nil { report.add(.invalid, .reference, "the reference to '\(reference.uri)' has no Id") }
            // A reference is a URI: only %XX is decoded (RFC 3986), so '+' is a plus, not a
            // space, as the reference implementation and digidoc4j read it.
            guard let file = container.dataFile(named: reference.dataFileName) else {
                report.add(.invalid, .referenceUnknown,
                           "the signature references '\(reference.dataFileName)', which is not a data file of the container (Manifest references and signature references do not match)")
                continue
            }
            covered.insert(file.name)
            guard let algorithm = AlgorithmURI.digest(reference.digestAlgorithmURI) else {
                report.add(.invalid, .reference, "unsupported digest method \(reference.digestAlgorithmURI) for '\(file.name)'")
                continue
            }
            if algorithm.isWeak {
                report.add(.warning, .weakDigest, "the reference to '\(file.name)' uses the weak \(algorithm.rawValue) hash")
            }
            do {
                if try digests.digest(of: file.name, algorithm) != reference.digestValue {
                    report.add(.invalid, .referenceDigest,
                               "data file '\(file.name)' has changed since it was signed (Failed to validate Reference '\(reference.uri)')")
                }
            } catch {
                report.add(.invalid, .referenceDigest, "data file '\(file.name)' cannot be read: \(error)")
            }
            if let id = reference.id {
                if let mimeType = signature.dataObjectFormats["#" + id] {
                    // Only a manifest's word counts: an ASiC-S may have none, and a type guessed
                    // from the name is no claim to compare with (libdigidocpp skips ASiC-S too).
                    if let declared = file.declaredMediaType, mimeType != declared {
                        report.add(.invalid, .mimeType,
                                   "the signed media type of '\(file.name)' is '\(mimeType)' but the manifest says '\(declared)'")
                    }
                    if !Self.isConformantMediaType(mimeType) {
                        report.add(.warning, .mimeType, "'\(mimeType)' is not a conformant media type")
                    }
                } else if signature.hasSignedDataObjectProperties {
                    report.add(.invalid, .dataObjectFormats, "no DataObjectFormat for the reference to '\(file.name)'")
                }
            }
        }
        for file in container.dataFiles where !covered.contains(file.name) {
            report.add(.invalid, .fileNotSigned,
                       "data file '\(file.name)' is not covered by the signature (Manifest datafile not listed in signature references)")
        }
    }

    static func isConformantMediaType(_ value: String) -> Bool {
        let parts = value.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[1].isEmpty else { return false }
        let word: (Character) -> Bool = { $0.isLetter || $0.isNumber || $0 == "_" }
        return parts[0].allSatisfy(word) && parts[1].allSatisfy { word($0) || "-+.".contains($0) }
    }

    func checkSignerTrust(_ certificate: Certificate, others: [Certificate], at time: Date, when: String,
                          _ report: inout SignatureReport) {
        guard let trust else {
            report.add(.indeterminate, .noTrust, noTrust)
            return
        }
        switch trust.signerIssuer(of: certificate, intermediates: others, at: time) {
        case .untrusted(let why):
            report.add(.indeterminate, .signerNotTrusted, "the signer's certificate is not trusted \(when) (\(ISOTime.string(time))): \(why)")
            report.evidence.chainIsTrusted = false
        case .trusted(let path, _):
            report.evidence.trustedPath(path, from: certificate)
        }
    }

    func checkQualification(_ certificate: Certificate, others: [Certificate], at time: Date, _ report: inout SignatureReport) {
        guard let trust else { return }
        let qualification = trust.qualification(of: certificate, intermediates: others, at: time)
        report.qualification = qualification.label
        // The reference passes these with a warning ("OK (NonQSCD)"): the signature is sound and
        // its signer trusted, it is only not a qualified one.
        if !qualification.isQualified || !qualification.isOnQSCD {
            report.add(.warning, .notQualified,
                       "NonQSCD: Signing certificate does not meet Qualification requirements: \(qualification.reason ?? qualification.label)")
        }
    }
}

/// Data-file digests, each computed once per algorithm however many signatures ask.
final class DigestCache: @unchecked Sendable {
    let container: Container
    private var cache: [String: [UInt8]] = [:]
    private let lock = NSLock()

    init(container: Container) { self.container = container }

    func remember(_ digest: [UInt8], of name: String, _ algorithm: DigestAlgorithm) {
        lock.withLock { cache[algorithm.rawValue + "\u{0}" + name] = digest }
    }

    func digest(of name: String, _ algorithm: DigestAlgorithm) throws -> [UInt8] {
        let key = algorithm.rawValue + "\u{0}" + name
        if let cached = lock.withLock({ cache[key] }) { return cached }
        if algorithm == .sha256 { return try container.sha256(of: name) }
        let hasher = Hasher(algorithm)
        try container.read(name) { hasher.update($0) }
        let digest = hasher.finish()
        lock.withLock { cache[key] = digest }
        return digest
    }
}

import ASiC
import Crypto
import Foundation

/// A container's validation result as an ETSI TS 119 102-2 validation report (the XML that
/// DSS and SiVa's detailed reports follow): per signature its identifier, the constraints
/// checked with their outcome, the validation time and the time proven, the signer, the main
/// and sub-indication with the certificate chain, and, as validation objects, the
/// certificates, time-stamp tokens and OCSP responses the verdict rests on.
public struct ETSIValidationReport {
    public static let namespace = "http://uri.etsi.org/19102/v1.2.1#"
    static let urn = "urn:etsi:019102:"

    let report: ContainerReport
    let validationTime: Date

    public init(_ report: ContainerReport, validationTime: Date = Date()) {
        self.report = report
        self.validationTime = validationTime
    }

    public var xml: String {
        var objects = ValidationObjects()
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<ValidationReport xmlns=\"\(Self.namespace)\" xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\">\n"
        for signature in report.signatures { out += signatureReport(signature, &objects) }
        if !objects.entries.isEmpty {
            out += "<SignatureValidationObjects>\n" + objects.entries.map(\.xml).joined() + "</SignatureValidationObjects>\n"
        }
        return out + "</ValidationReport>\n"
    }

    // MARK: - One signature

    private func signatureReport(_ signature: SignatureReport, _ objects: inout ValidationObjects) -> String {
        let evidence = signature.evidence
        let chain = evidence.certificateChain.map { objects.add(.certificate, $0) }
        let tokens = evidence.timeStamps.map { (stamp: $0, id: objects.add(.timestamp, $0.token)) }
        let responses = evidence.ocspResponses.map { objects.add(.ocspResponse, $0) }

        var out = "<SignatureValidationReport>\n"
        out += "<SignatureIdentifier id=\"\(Self.signatureID(signature))\">"
            + "<DigestAlgAndValue><ds:DigestMethod Algorithm=\"http://www.w3.org/2001/04/xmlenc#sha256\"/>"
            + "<ds:DigestValue>\(Data(Digest.hash(evidence.identifyingBytes, .sha256)).base64EncodedString())</ds:DigestValue></DigestAlgAndValue>"
            + (evidence.signatureValue.map { "<ds:SignatureValue>\(Data($0).base64EncodedString())</ds:SignatureValue>" } ?? "")
            + "<HashOnly>false</HashOnly><DocHashOnly>false</DocHashOnly>"
            + "<DAIdentifier>\(Self.text(signature.file))</DAIdentifier></SignatureIdentifier>\n"
        out += constraints(signature)
        out += "<ValidationTimeInfo><ValidationTime>\(ISOTime.string(validationTime))</ValidationTime>"
        if let proven = evidence.provenTime {
            out += "<BestSignatureTime><POETime>\(ISOTime.string(proven))</POETime>"
                + "<TypeOfProof>\(Self.urn)poetype:validation</TypeOfProof></BestSignatureTime>"
        }
        out += "</ValidationTimeInfo>\n"
        out += attributes(signature, signer: chain.first, tokens: tokens, responses: responses)
        if let signer = chain.first {
            out += "<SignerInformation Pseudonym=\"false\"><SignerCertificate VOReference=\"\(signer)\"/>"
                + (signature.signerName.map { "<Signer>\(Self.text($0))</Signer>" } ?? "") + "</SignerInformation>\n"
        }
        if let quality = signature.qualification.flatMap(Self.qualityURN) {
            out += "<SignatureQuality><SignatureQualityInformation>\(quality)</SignatureQualityInformation></SignatureQuality>\n"
        }
        out += "<SignatureValidationProcess><SignatureValidationProcessID>\(Self.urn)validationprocess:\(Self.process(signature))"
            + "</SignatureValidationProcessID></SignatureValidationProcess>\n"
        out += status(signature, chain: chain, trusted: evidence.chainIsTrusted)
        return out + "</SignatureValidationReport>\n"
    }

    /// Each check asicfs makes on this kind of signature, failed when a finding names it.
    private func constraints(_ signature: SignatureReport) -> String {
        var out = "<ValidationConstraintsEvaluationReport>\n"
        for constraint in ValidationConstraint.checked(for: signature) {
            let failing = signature.findings.filter { constraint.codes.contains($0.code) }
            out += "<ValidationConstraint><ValidationConstraintIdentifier>urn:asicfs:constraint:\(constraint.name)</ValidationConstraintIdentifier>"
                + "<ConstraintStatus><Status>\(Self.urn)validationconstraintstatus:applied</Status></ConstraintStatus>"
                + "<ValidationStatus><MainIndication>\(Self.mainIndication(Self.worst(failing)))</MainIndication>"
                + (Self.subIndication(failing).map { "<SubIndication>\($0)</SubIndication>" } ?? "")
                + "</ValidationStatus></ValidationConstraint>\n"
        }
        return out + "</ValidationConstraintsEvaluationReport>\n"
    }

    private func attributes(_ signature: SignatureReport, signer: String?,
                            tokens: [(stamp: SignatureEvidence.TimeStamp, id: String)], responses: [String]) -> String {
        var parts: [String] = []
        if let claimed = signature.claimedSigningTime, let time = ISO8601DateFormatter().date(from: claimed) {
            parts.append("<SigningTime Signed=\"true\"><Time>\(ISOTime.string(time))</Time></SigningTime>")
        }
        if let signer, signature.kind == "XAdES" {
            parts.append("<SigningCertificate Signed=\"true\"><AttributeObject VOReference=\"\(signer)\"/></SigningCertificate>")
        }
        for (stamp, id) in tokens {
            let element: String
            switch stamp.role {
            case .signature, .container: element = "SignatureTimeStamp"
            case .archive: element = "ArchiveTimeStamp"
            case .allDataObjects: element = "AllDataObjectsTimeStamp"
            case .individualDataObjects: element = "IndividualDataObjectsTimeStamp"
            }
            // Content time-stamps are signed properties; the others are added after signing.
            let signed = stamp.role == .allDataObjects || stamp.role == .individualDataObjects ? "true" : "false"
            parts.append("<\(element) Signed=\"\(signed)\"><AttributeObject VOReference=\"\(id)\"/>"
                + "<TimeStampValue>\(ISOTime.string(stamp.time))</TimeStampValue></\(element)>")
        }
        if !responses.isEmpty {
            parts.append("<RevocationValues Signed=\"false\">"
                + responses.map { "<AttributeObject VOReference=\"\($0)\"/>" }.joined() + "</RevocationValues>")
        }
        return parts.isEmpty ? "" : "<SignatureAttributes>" + parts.joined() + "</SignatureAttributes>\n"
    }

    private func status(_ signature: SignatureReport, chain: [String], trusted: Bool) -> String {
        var out = "<SignatureValidationStatus><MainIndication>\(Self.mainIndication(signature.verdict))</MainIndication>"
        if let sub = Self.subIndication(signature.errors) { out += "<SubIndication>\(sub)</SubIndication>" }
        out += "<AssociatedValidationReportData>"
        if let signer = chain.first {
            out += "<CertificateChain><SigningCertificate VOReference=\"\(signer)\"/>"
            let rest = chain.dropFirst()
            let intermediates = trusted ? rest.dropLast() : rest
            out += intermediates.map { "<IntermediateCertificate VOReference=\"\($0)\"/>" }.joined()
            if trusted, let anchor = rest.last { out += "<TrustAnchor VOReference=\"\(anchor)\"/>" }
            out += "</CertificateChain>"
        }
        // Each finding as asicfs said it: severity and stable code in the type, the sentence as the value.
        if !signature.findings.isEmpty {
            out += "<AdditionalValidationReportData>" + signature.findings.map {
                "<ReportData><Type>urn:asicfs:finding:\($0.severity.rawValue):\(Self.text($0.code))</Type><Value>\(Self.text($0.message))</Value></ReportData>"
            }.joined() + "</AdditionalValidationReportData>"
        }
        return out + "</AssociatedValidationReportData></SignatureValidationStatus>\n"
    }

    // MARK: - Indications

    static func worst(_ findings: [Finding]) -> Verdict { findings.map(\.severity.verdict).max() ?? .valid }

    static func mainIndication(_ verdict: Verdict) -> String {
        switch verdict {
        case .valid, .validWithWarnings: urn + "mainindication:total-passed"
        case .indeterminate: urn + "mainindication:indeterminate"
        case .invalid: urn + "mainindication:total-failed"
        }
    }

    /// EN 319 102-1's sub-indication for the worst finding, where one fits its code.
    static func subIndication(_ findings: [Finding]) -> String? {
        let worst = worst(findings)
        guard worst == .invalid || worst == .indeterminate else { return nil }
        for finding in findings where finding.severity.verdict == worst {
            if let name = (worst == .invalid ? failedSubIndications : indeterminateSubIndications)[finding.code] {
                return urn + "subindication:" + name
            }
        }
        return nil
    }

    static let failedSubIndications: [String: String] = [
        "reference-digest": "HASH_FAILURE", "reference-unknown": "HASH_FAILURE", "file-not-signed": "HASH_FAILURE",
        "content-timestamp": "HASH_FAILURE", "archive-manifest": "HASH_FAILURE",
        "signature-value": "SIG_CRYPTO_FAILURE", "signed-properties": "SIG_CRYPTO_FAILURE",
        "revoked": "REVOKED", "certificate-expired": "EXPIRED",
        "structure": "FORMAT_FAILURE", "unreadable": "FORMAT_FAILURE", "canonicalization": "FORMAT_FAILURE",
        "reference": "FORMAT_FAILURE", "data-object-formats": "FORMAT_FAILURE", "mime-type": "FORMAT_FAILURE",
        "no-data-files": "FORMAT_FAILURE", "signing-certificate": "FORMAT_FAILURE", "policy": "FORMAT_FAILURE",
    ]

    static let indeterminateSubIndications: [String: String] = [
        "signer-not-trusted": "NO_CERTIFICATE_CHAIN_FOUND", "no-trust": "NO_CERTIFICATE_CHAIN_FOUND",
        "tsa-not-trusted": "NO_CERTIFICATE_CHAIN_FOUND", "ocsp-not-trusted": "NO_CERTIFICATE_CHAIN_FOUND",
        "no-timestamp": "NO_POE", "no-revocation": "TRY_LATER", "ocsp": "TRY_LATER", "ocsp-unknown": "TRY_LATER",
        "unsupported-format": "FORMAT_FAILURE", "content-timestamp": "SIGNED_DATA_NOT_FOUND",
        "timestamp-order": "TIMESTAMP_ORDER_FAILURE",
    ]

    static func qualityURN(_ label: String) -> String? {
        switch label {
        case "QES": "urn:cef:dss:signatureQualification:QESig"
        case "AdES/QC": "urn:cef:dss:signatureQualification:AdESig-QC"
        case "AdES": "urn:cef:dss:signatureQualification:AdESig"
        default: nil
        }
    }

    /// EN 319 102-1's process: Basic, with time and long-term material (LTVM), or archival (LTA).
    static func process(_ signature: SignatureReport) -> String {
        let roles = Set(signature.evidence.timeStamps.map(\.role))
        if roles.contains(.archive) { return "LTA" }
        if roles.contains(.signature) || roles.contains(.container) || !signature.evidence.ocspResponses.isEmpty { return "LTVM" }
        return "Basic"
    }

    /// An xs:ID for the signature: its own Id when that is a plain name, else its position.
    static func signatureID(_ signature: SignatureReport) -> String {
        "S-\(signature.index)" + (signature.id.map { id in
            id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) } ? "-" + id : ""
        } ?? "")
    }

    /// Text for an element: control characters shown escaped (never raw), then XML-escaped.
    static func text(_ value: String) -> String {
        PrintableText.escaped(value).replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// The certificates, tokens and responses a report refers to, each listed once.
struct ValidationObjects {
    enum Kind: String {
        case certificate, timestamp
        case ocspResponse = "OCSPResponse"
    }

    struct Entry {
        let id: String
        let kind: Kind
        let der: [UInt8]

        var xml: String {
            "<ValidationObject id=\"\(id)\"><ObjectType>\(ETSIValidationReport.urn)validationObject:\(kind.rawValue)</ObjectType>"
                + "<ValidationObjectRepresentation><base64>\(Data(der).base64EncodedString())</base64></ValidationObjectRepresentation>"
                + "</ValidationObject>\n"
        }
    }

    private(set) var entries: [Entry] = []

    /// The object's id (the same bytes get the same id).
    mutating func add(_ kind: Kind, _ der: [UInt8]) -> String {
        if let known = entries.first(where: { $0.kind == kind && $0.der == der }) { return known.id }
        let id = "V-\(kind == .ocspResponse ? "ocsp" : kind.rawValue)-\(entries.count + 1)"
        entries.append(Entry(id: id, kind: kind, der: der))
        return id
    }
}

/// Every code a finding can carry: the stable names `asicfs verify --json` prints, so a script
/// can tell "not trusted" from "broken". The man page's table (VALIDATION, Finding codes) lists
/// exactly these; a test holds the two equal. Never rename one: add a new case instead.
public enum FindingCode: String, Sendable, CaseIterable, Codable {
    // The signature document and the XML-DSig core.
    case unreadable
    case structure
    case unsupportedFormat = "unsupported-format"
    case canonicalization
    case signedProperties = "signed-properties"
    case signatureValue = "signature-value"
    case signingCertificate = "signing-certificate"
    case policy
    case weakDigest = "weak-digest"
    // The data files.
    case dataObjectFormats = "data-object-formats"
    case noDataFiles = "no-data-files"
    case reference
    case referenceUnknown = "reference-unknown"
    case referenceDigest = "reference-digest"
    case mimeType = "mime-type"
    case fileNotSigned = "file-not-signed"
    // The signer's certificate and trust.
    case keyUsage = "key-usage"
    case noTrust = "no-trust"
    case signerNotTrusted = "signer-not-trusted"
    case trustedList = "trusted-list"
    case certificateExpired = "certificate-expired"
    case notQualified = "not-qualified"
    // Time and revocation.
    case timestamp
    case tsaNotTrusted = "tsa-not-trusted"
    case noTimestamp = "no-timestamp"
    case noRevocation = "no-revocation"
    case ocsp
    case ocspNotTrusted = "ocsp-not-trusted"
    case ocspUnknown = "ocsp-unknown"
    case revoked
    case ocspBeforeTimestamp = "ocsp-before-timestamp"
    case ocspLate = "ocsp-late"
    case timeMark = "time-mark"
    case contentTimestamp = "content-timestamp"
    case timestampOrder = "timestamp-order"
    // Long-term archive evidence.
    case archiveTimestamp = "archive-timestamp"
    case archiveManifest = "archive-manifest"
}

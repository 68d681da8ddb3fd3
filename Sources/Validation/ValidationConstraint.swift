/// A check the validator makes, named for a validation report, with the finding codes that
/// mean it failed (or warned). A check with none of them among the findings passed.
struct ValidationConstraint {
    let name: String
    let codes: Set<String>

    static let format = Self(name: "format", codes: ["structure", "unreadable", "canonicalization", "policy", "unsupported-format"])
    static let signatureValue = Self(name: "signature-value", codes: ["signature-value", "signed-properties", "weak-digest"])
    static let signingCertificate = Self(name: "signing-certificate", codes: ["signing-certificate", "key-usage", "certificate-expired"])
    static let dataObjects = Self(name: "signed-data-objects", codes: [
        "reference", "reference-digest", "reference-unknown", "file-not-signed", "no-data-files", "data-object-formats", "mime-type",
    ])
    static let contentTimeStamps = Self(name: "content-timestamps", codes: ["content-timestamp", "timestamp-order"])
    static let signerTrust = Self(name: "signer-trust", codes: ["signer-not-trusted", "no-trust", "trusted-list"])
    static let qualification = Self(name: "qualification", codes: ["not-qualified"])
    static let timeStamp = Self(name: "signature-timestamp", codes: ["timestamp", "tsa-not-trusted", "no-timestamp", "time-mark"])
    static let revocation = Self(name: "revocation", codes: [
        "ocsp", "ocsp-unknown", "ocsp-not-trusted", "ocsp-before-timestamp", "ocsp-late", "revoked", "no-revocation",
    ])
    static let archive = Self(name: "archive-timestamps", codes: ["archive-timestamp", "archive-manifest"])

    /// The checks made on a signature of this kind (an ASiC-S token is checked as a time-stamp;
    /// a CAdES file or ASiC-E token is only recognised).
    static func checked(for signature: SignatureReport) -> [ValidationConstraint] {
        switch signature.kind {
        case "XAdES":
            [format, signatureValue, signingCertificate, dataObjects, contentTimeStamps, signerTrust, qualification,
             timeStamp, revocation, archive]
        case "TimeStampToken" where signature.findings.contains { $0.code == "unsupported-format" }: [format]
        case "TimeStampToken": [timeStamp, archive]
        default: [format]
        }
    }
}

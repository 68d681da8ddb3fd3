import Crypto

/// Who may sign a trusted list: certificates (`tsl-cert`, or a pointer's ServiceDigitalIdentity
/// in the LOTL) and fingerprints (the built-in LOTL signers, `tsl-signer-sha256`) of the
/// certificate the list carries in its own KeyInfo.
public struct ListSigners: Sendable {
    public var certificates: [Certificate]
    public var fingerprints: [CertificateFingerprint]

    public init(certificates: [Certificate] = [], fingerprints: [CertificateFingerprint] = []) {
        self.certificates = certificates
        self.fingerprints = fingerprints
    }

    public var isEmpty: Bool { certificates.isEmpty && fingerprints.isEmpty }

    func allows(_ certificate: Certificate) -> Bool {
        certificates.contains { $0 == certificate } || fingerprints.contains { $0.matches(certificate) }
    }

    /// The signer a list without KeyInfo must have been made by: only a single certificate can
    /// say (a fingerprint has no key to check the value with).
    var onlyCertificate: Certificate? { certificates.count == 1 && fingerprints.isEmpty ? certificates[0] : nil }

    /// For messages: each allowed signer by name.
    var names: String {
        (certificates.map(\.displayName) + fingerprints.map(\.description)).joined(separator: ", ")
    }
}

import Crypto

/// One way into an encrypted container, as its header lists it. Nothing secret: `asicfs ls`
/// shows these without a key.
public struct Recipient: Sendable {
    public enum Kind: String, Sendable, Codable {
        /// CDOC 1.x: a certificate; its key decrypts the wrapped key (RSA) or agrees on it (EC).
        case rsaCertificate = "rsa-certificate", ecCertificate = "ec-certificate"
        /// CDOC2 public-key capsules (the key only; a label names its holder).
        case rsaPublicKey = "rsa-public-key", ecPublicKey = "ec-public-key"
        case symmetricKey = "symmetric-key", password
        /// CDOC2 key-server capsules: the key material is on a server (not supported: needs the server).
        case keyServer = "key-server"
        /// CDOC2 key shares (Smart-ID/Mobile-ID authentication; not supported).
        case keyShares = "key-shares"
    }

    public var kind: Kind
    /// The label as written (free text or a `data:` label); empty when the format has none.
    public var label: String
    /// What to show a person: the certificate's subject, or the label's cn/label field, or `label`.
    public var displayName: String
    /// CDOC 1.x recipients carry the certificate.
    public var certificate: Certificate?
    /// The recipient's public key: EC as the uncompressed point, RSA as PKCS#1 DER (CDOC2's form;
    /// for CDOC 1.x taken from the certificate).
    public var publicKey: [UInt8]?
    /// Key-server capsules: the server id and transaction id.
    public var keyServerID: String?
    public var transactionID: String?

    public init(kind: Kind, label: String = "", displayName: String, certificate: Certificate? = nil,
                publicKey: [UInt8]? = nil, keyServerID: String? = nil, transactionID: String? = nil) {
        self.kind = kind
        self.label = label
        self.displayName = displayName
        self.certificate = certificate
        self.publicKey = publicKey
        self.keyServerID = keyServerID
        self.transactionID = transactionID
    }
}

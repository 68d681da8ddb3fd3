import Crypto

/// Whoever holds the private key of a public-key recipient: the ID-card, a PKCS#11 token, a
/// PKCS#12 file, a PEM key. The formats ask it for one operation each and never see the key.
public protocol RecipientKey: AnyObject {
    /// For messages: "the ID-card of MARI-LIIS MÄNNIK", "key.pem".
    var name: String { get }
    /// The key's certificate when there is one (CDOC 1.x matches recipients by certificate).
    var certificate: Certificate? { get }
    /// The public key, to match recipients by key (CDOC2) and to know the curve.
    var publicKey: PublicKey { get }
    /// ECDH with the sender's ephemeral public key: Z, the X coordinate at full field length.
    func agree(with senderKey: PublicKey) throws -> SecretBytes
    /// Decrypts a key wrapped for this RSA key.
    func decrypt(_ wrappedKey: [UInt8], padding: RSAKeyPadding) throws -> SecretBytes
}

/// A key in memory: a PEM/DER private key file or a PKCS#12 identity.
public final class SoftwareRecipientKey: RecipientKey {
    public let name: String
    public let certificate: Certificate?
    private let privateKey: PrivateKey

    public init(name: String, privateKey: PrivateKey, certificate: Certificate? = nil) {
        self.name = name
        self.privateKey = privateKey
        self.certificate = certificate
    }

    public var publicKey: PublicKey { privateKey.publicKey }
    public func agree(with senderKey: PublicKey) throws -> SecretBytes { try privateKey.agree(with: senderKey) }
    public func decrypt(_ wrappedKey: [UInt8], padding: RSAKeyPadding) throws -> SecretBytes {
        try privateKey.decrypt(wrappedKey, padding: padding)
    }
}

/// What the person decrypting gives.
public enum Unlocker {
    /// A private key (card, token, file): opens the recipient whose certificate or key is its own.
    case key(RecipientKey)
    /// A symmetric key (CDOC2); `label` chooses among several symmetric recipients (nil: the only one).
    case symmetricKey(SecretBytes, label: String?)
    /// A password (CDOC2 PBKDF2 recipients).
    case password(SecretBytes, label: String?)
}

/// Who a new container is encrypted for.
public enum RecipientSpec {
    /// CDOC 1.x: an RSA or EC certificate; CDOC2: a public-key capsule for the certificate's key,
    /// labelled from the certificate (ID-card/Digi-ID/cert data label).
    case certificate(Certificate)
    /// CDOC2 only: a bare public key with a label.
    case publicKey(PublicKey, label: String)
    /// CDOC2 only.
    case symmetricKey(SecretBytes, label: String)
    /// CDOC2 only: PBKDF2-HMAC-SHA256, 600 000 iterations.
    case password(SecretBytes, label: String)
}

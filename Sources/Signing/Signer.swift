import Crypto

/// What a signing method tells the person signing, while it works.
public enum SigningEvent: Sendable, Equatable {
    /// A step of the session ("reading the certificate", "time-stamping", ...).
    case step(String)
    /// Mobile-ID and Smart-ID: the code the user must see on the phone before confirming.
    case verificationCode(String)
    /// The signer waits for the person (PIN, phone confirmation): what to do.
    case waitingForUser(String)
    /// Smart-ID v3 QR signing: the device link to show as a QR code now (a new one each second;
    /// `elapsedSeconds` since the session started, the number it carries).
    case deviceLink(String, elapsedSeconds: Int)
}

/// One way to make a signature value: a PKCS#12 file, a token, a card, a phone service.
/// Methods block (they talk to devices and services) and are called on the session's thread.
public protocol Signer: Sendable {
    /// The method name as the control files and `--method` spell it (e.g. "pkcs12").
    var method: String { get }
    /// The signer's certificate; called once, before anything is signed.
    func certificate(events: (SigningEvent) -> Void) throws -> Certificate
    /// Certificates that came with the signer (e.g. the issuing CA inside a PKCS#12 file).
    var extraCertificates: [Certificate] { get }
    /// The algorithm to use with this certificate.
    func algorithm(for certificate: Certificate) -> SignatureAlgorithm
    /// Signs `digest` (already hashed with `algorithm.digest`). ECDSA values are raw r||s.
    func sign(digest: [UInt8], algorithm: SignatureAlgorithm, events: (SigningEvent) -> Void) throws -> [UInt8]
}

extension Signer {
    public var extraCertificates: [Certificate] { [] }
    public func algorithm(for certificate: Certificate) -> SignatureAlgorithm {
        certificate.publicKey?.preferredAlgorithm ?? SignatureAlgorithm(.rsaPKCS1, .sha256)
    }
}

/// Why a signing failed, as one sentence; the container is unchanged whenever this is thrown.
public struct SigningError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

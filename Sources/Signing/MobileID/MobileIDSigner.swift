import Crypto
import Foundation
import Synchronization

/// Signs with Mobile-ID (SK's MID-REST service, Estonia and Lithuania): the certificate comes from
/// the service, the phone signs the digest after the user checks the verification code and enters
/// PIN2. Events: `.verificationCode` before the request is sent, `.waitingForUser` while the
/// phone is asked.
public final class MobileIDSigner: Signer, SignerFactory {
    public let method = "mobile-id"
    public static let parameterKeys: Set<String> = ["phone", "idcode", "language", "message"]
    public static let usage = "phone=+372... idcode=...  [language=EST|ENG|RUS|LIT] [message=...]\n"
        + "example: echo \"phone=+37200000766 idcode=60001019906\" > .asicfs/sign/mobile-id"

    public static func validate(_ parameters: SigningParameters) throws {
        _ = try MobileIDParameters(parameters)
    }

    public static func make(_ parameters: SigningParameters, context: SignerContext) throws -> Signer {
        try MobileIDSigner(MobileIDParameters(parameters), client: MobileIDClient(context: context))
    }

    public let parameters: MobileIDParameters
    let client: MobileIDClient
    /// Asked once per signing: the session reads it before building the signature.
    private let cachedCertificate = Mutex<Certificate?>(nil)

    public init(_ parameters: MobileIDParameters, client: MobileIDClient) {
        self.parameters = parameters
        self.client = client
    }

    public func certificate(events: (SigningEvent) -> Void) throws -> Certificate {
        if let known = cachedCertificate.withLock({ $0 }) { return known }
        events(.step("asking Mobile-ID for the certificate of \(parameters.phone)"))
        let certificate = try client.certificate(phone: parameters.phone, personalCode: parameters.personalCode)
        // Estonian and Lithuanian certificates name the person's code (PNOEE-..., or the bare code).
        if let serial = certificate.serialNumberAttribute, !serial.hasSuffix(parameters.personalCode) {
            throw SigningError("Mobile-ID returned the certificate of \(certificate.commonName ?? serial), "
                + "not one for the personal code given")
        }
        cachedCertificate.withLock { $0 = certificate }
        return certificate
    }

    /// EC keys: ECDSA with the hash their size calls for (P-256 → SHA-256, P-384 → SHA-384);
    /// RSA keys: PKCS#1 v1.5 with SHA-256 (the SIM does no PSS).
    public func algorithm(for certificate: Certificate) -> SignatureAlgorithm {
        guard let key = certificate.publicKey, key.isEC else { return SignatureAlgorithm(.rsaPKCS1, .sha256) }
        return key.preferredAlgorithm
    }

    public func sign(digest: [UInt8], algorithm: SignatureAlgorithm, events: (SigningEvent) -> Void) throws -> [UInt8] {
        guard let hashType = Self.hashTypes[algorithm.digest], digest.count == algorithm.digest.length,
              algorithm.scheme != .rsaPSS else {
            throw SigningError("Mobile-ID signs SHA-256, SHA-384 or SHA-512 digests with RSA PKCS#1 or ECDSA, not \(algorithm)")
        }
        guard let code = MobileIDVerificationCode.compute(digest) else {
            throw SigningError("Mobile-ID: a \(digest.count)-byte digest is too short to sign")
        }
        // The code depends only on the digest: the user must be able to read it before the phone asks.
        events(.verificationCode(code))
        events(.step("sending the signing request to Mobile-ID"))
        let deadline = Date().addingTimeInterval(client.timeout)
        let sessionID = try client.startSigning(parameters, hash: digest, hashType: hashType, deadline: deadline)
        events(.waitingForUser("confirm on the phone \(parameters.phone) with PIN2 if it shows the verification code \(code) "
            + "(waiting up to \(MobileIDFailure.format(client.timeout)) s)"))
        let signature = try client.waitForSignature(sessionID: sessionID, deadline: deadline)
        guard signature.matches(algorithm) else {
            throw SigningError("Mobile-ID signed with \(MobileIDFailure.printable(signature.algorithmName)), but the "
                + "certificate's key calls for \(algorithm); the value cannot be used")
        }
        return signature.value
    }

    static let hashTypes: [DigestAlgorithm: String] = [.sha256: "SHA256", .sha384: "SHA384", .sha512: "SHA512"]
}

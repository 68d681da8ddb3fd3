import Crypto
import Foundation
import Synchronization

/// Signs with Smart-ID (SK ID Solutions, RP API v2): a certificate choice gives the certificate
/// and the account's document number; the signature request goes to that account, after the
/// verification code computed from the digest has been shown.
public final class SmartIDSigner: Signer, SignerFactory {
    public let method = "smart-id"
    public static let parameterKeys: Set<String> = ["country", "idcode", "document", "qr", "display", "message"]
    public static let usage = "country=EE idcode=...  or  document=PNOEE-...  or  qr=yes (v3)  [display=pin|confirmation] [message=TEXT]\n"
        + "example: echo \"country=EE idcode=30303039914\" > .asicfs/sign/smart-id"

    public static func validate(_ parameters: SigningParameters) throws {
        _ = try SmartIDRequest(parameters)
    }

    /// RP API v3 unless `smart-id.api` (or an older /v2 `smart-id.url`) says v2.
    public static func make(_ parameters: SigningParameters, context: SignerContext) throws -> Signer {
        let request = try SmartIDRequest(parameters)
        if try SmartIDAPI(context.configuration) == .v3 { return try SmartIDV3Signer(request: request, context: context) }
        guard request.account != .scanner else {
            throw SigningError("smart-id: qr=yes needs Smart-ID's RP API v3 (smart-id.api = v3)")
        }
        return try SmartIDSigner(request: request, context: context)
    }

    let request: SmartIDRequest
    let client: SmartIDClient
    /// SK advises a short pause between showing the code and sending the request, so that a
    /// user on the same phone sees the code before the app comes to the front.
    let pauseAfterCode: Double
    /// The document number of the account whose certificate was chosen: the signature must come from it.
    private let chosenDocument = Mutex<String?>(nil)

    init(request: SmartIDRequest, context: SignerContext, pauseAfterCode: Double = 0.5) throws {
        self.request = request
        self.pauseAfterCode = min(pauseAfterCode, 1)
        client = try SmartIDClient(context: context)
    }

    /// RSA PKCS#1 v1.5 with SHA-256: Smart-ID keys are RSA, the service signs DigestInfo(hash),
    /// and SHA-256 is what libdigidocpp and DigiDoc4 pair with RSA keys.
    public func algorithm(for certificate: Certificate) -> SignatureAlgorithm {
        SignatureAlgorithm(.rsaPKCS1, .sha256)
    }

    public func certificate(events: (SigningEvent) -> Void) throws -> Certificate {
        events(.step("Smart-ID: asking for the certificate (the app asks which account to use if there are several)"))
        let sessionID = try client.startCertificateChoice(for: request.account)
        let status = try client.waitForSuccess(of: sessionID)
        let (certificate, document) = try Self.chosen(status.cert, document: status.result?.documentNumber)
        chosenDocument.withLock { $0 = document }
        return certificate
    }

    /// The certificate and document number of a completed certificate choice, checked: QUALIFIED,
    /// RSA, and a document number fit for a URL path.
    static func chosen(_ cert: SmartIDSessionStatus.Certificate?, document: String?) throws -> (Certificate, String) {
        let level = try SmartIDFailure.required(cert?.certificateLevel, "cert.certificateLevel").uppercased()
        guard level == "QUALIFIED" || level == "QSCD" else {
            throw SigningError(level == "ADVANCED"
                ? "Smart-ID: the account's certificate is of ADVANCED level (Smart-ID Basic); a qualified Smart-ID account is needed to sign"
                : "Smart-ID: the account's certificate level '\(SmartIDFailure.printable(level))' is not QUALIFIED; a qualified Smart-ID account is needed to sign")
        }
        let certificate = try Self.certificate(base64: try SmartIDFailure.required(cert?.value, "cert.value"))
        guard certificate.publicKey?.isRSA == true else {
            throw SigningError("Smart-ID: the account's certificate does not hold an RSA key, as Smart-ID certificates do")
        }
        let document = try SmartIDFailure.required(document, "result.documentNumber")
        // It goes into the signature request's path.
        guard !document.isEmpty, document.count <= 64,
              document.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw SigningError("Smart-ID: the service's document number '\(SmartIDFailure.printable(document))' is malformed")
        }
        return (certificate, document)
    }

    public func sign(digest: [UInt8], algorithm: SignatureAlgorithm, events: (SigningEvent) -> Void) throws -> [UInt8] {
        guard algorithm.scheme == .rsaPKCS1, let hashType = Self.hashTypes[algorithm.digest] else {
            throw SigningError("Smart-ID signs RSA PKCS#1 v1.5 with SHA-256, SHA-384 or SHA-512, not \(algorithm)")
        }
        guard let document = chosenDocument.withLock({ $0 }) else {
            throw SigningError("Smart-ID: the certificate must be chosen before signing")
        }
        let code = SmartIDVerificationCode.code(for: digest)
        events(.verificationCode(code))
        events(.waitingForUser("Smart-ID: if the app shows the code \(code), enter PIN2 to sign; otherwise cancel there"))
        try pause(pauseAfterCode)

        let sessionID = try client.startSignature(document: document, hash: digest, hashType: hashType,
                                                  interactions: request.interactions)
        let status = try client.waitForSuccess(of: sessionID)
        let used = try SmartIDFailure.required(status.signature?.algorithm, "signature.algorithm")
        let expected = Self.algorithmNames[algorithm.digest]!
        guard used.caseInsensitiveCompare(expected) == .orderedSame else {
            throw SigningError("Smart-ID: the service signed with '\(SmartIDFailure.printable(used))', not the \(expected) asked for")
        }
        guard let value = Data(base64Encoded: try SmartIDFailure.required(status.signature?.value, "signature.value")), !value.isEmpty else {
            throw SigningError("Smart-ID: the service's signature.value is not Base64")
        }
        return [UInt8](value)
    }

    static let hashTypes: [DigestAlgorithm: String] = [.sha256: "SHA256", .sha384: "SHA384", .sha512: "SHA512"]
    static let algorithmNames: [DigestAlgorithm: String] = [
        .sha256: "sha256WithRSAEncryption", .sha384: "sha384WithRSAEncryption", .sha512: "sha512WithRSAEncryption",
    ]

    static func certificate(base64: String) throws -> Certificate {
        guard let der = Data(base64Encoded: base64), let certificate = try? Certificate(der: [UInt8](der)) else {
            throw SigningError("Smart-ID: the service's cert.value is not a Base64 DER certificate")
        }
        return certificate
    }

    /// Sleeps in short steps so that a cancellation is not held up.
    private func pause(_ seconds: Double) throws {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if client.cancellation.isCancelled { throw SigningError("the signing was cancelled; the container is unchanged") }
            Thread.sleep(forTimeInterval: min(0.05, max(0, end.timeIntervalSinceNow)))
        }
    }
}

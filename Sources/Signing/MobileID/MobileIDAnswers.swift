import Crypto
import Foundation

// The MID-REST answers asicfs reads, decoded strictly: anything missing or of the wrong type is
// "something asicfs cannot read", and unknown members are ignored (the service may add some).

/// `POST /certificate`: OK with the signing certificate, or NOT_FOUND (NOT_ACTIVE in old versions).
struct MobileIDCertificateAnswer {
    enum Result { case found(Certificate), notFound }
    let result: Result

    init(_ answer: JSONService.Answer) throws {
        let json = try MobileIDFailure.object(answer)
        guard let result = json["result"] as? String else { throw MobileIDFailure.unreadable("a certificate answer without a result") }
        switch result {
        case "OK":
            guard let text = json["cert"] as? String, let der = Data(base64Encoded: text), !der.isEmpty else {
                throw MobileIDFailure.unreadable("a certificate answer whose cert is not Base64")
            }
            guard let certificate = try? Certificate(der: Array(der)) else {
                throw MobileIDFailure.unreadable("a certificate answer whose cert is not an X.509 certificate")
            }
            self.result = .found(certificate)
        case "NOT_FOUND", "NOT_ACTIVE":
            self.result = .notFound
        default:
            throw SigningError("Mobile-ID: technical error: the certificate request ended with '\(MobileIDFailure.printable(result))'")
        }
    }
}

/// `POST /signature`: the session's id (`sessionID`; older services spelled it `sessionId`).
struct MobileIDSessionStart {
    let sessionID: String

    init(_ answer: JSONService.Answer) throws {
        let json = try MobileIDFailure.object(answer)
        // The id goes into the status URL: only characters that need no escaping there (it is a UUID).
        guard let id = (json["sessionID"] ?? json["sessionId"]) as? String, !id.isEmpty, id.count <= 200,
              id.unicodeScalars.allSatisfy({ Self.idCharacters.contains($0) })
        else {
            throw MobileIDFailure.unreadable("a signing answer without a usable sessionID")
        }
        sessionID = id
    }

    static let idCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~".unicodeScalars)
}

/// `GET /signature/session/{id}`: still running, or complete with a result (and, on OK, the value).
enum MobileIDSessionStatus {
    case running
    case complete(result: String, signature: MobileIDSignature?)

    init(_ answer: JSONService.Answer) throws {
        let json = try MobileIDFailure.object(answer)
        switch json["state"] as? String {
        case "RUNNING"?:
            self = .running
        case "COMPLETE"?:
            guard let result = json["result"] as? String, !result.isEmpty else {
                throw MobileIDFailure.unreadable("a completed session without a result")
            }
            guard result == "OK" else {
                self = .complete(result: result, signature: nil)
                return
            }
            guard let signature = json["signature"] as? [String: Any] else {
                throw MobileIDFailure.unreadable("a completed session without its signature")
            }
            self = .complete(result: result, signature: try MobileIDSignature(signature))
        case let state?:
            throw MobileIDFailure.unreadable("a session in state '\(MobileIDFailure.printable(state))'")
        case nil:
            throw MobileIDFailure.unreadable("a session status without a state")
        }
    }
}

/// The value a phone returned: RSA PKCS#1 v1.5, or ECDSA as raw r||s (the XML-DSig form).
public struct MobileIDSignature: Sendable, Equatable {
    public let value: [UInt8]
    /// As the service names it: `SHA256WithECEncryption`, `SHA384WithRSAEncryption`, ...
    public let algorithmName: String
    public let digest: DigestAlgorithm
    public let isEC: Bool

    init(_ json: [String: Any]) throws {
        guard let text = json["value"] as? String, let value = Data(base64Encoded: text), !value.isEmpty else {
            throw MobileIDFailure.unreadable("a signature value that is not Base64")
        }
        guard let name = json["algorithm"] as? String, let parsed = Self.parse(name) else {
            let shown = (json["algorithm"] as? String).map { "'\(MobileIDFailure.printable($0))'" } ?? "none"
            throw MobileIDFailure.unreadable("a signature algorithm asicfs does not know: \(shown)")
        }
        self.value = Array(value)
        algorithmName = name
        (digest, isEC) = parsed
    }

    /// `SHA<n>With<EC|RSA>Encryption`, the six names the service uses.
    static func parse(_ name: String) -> (DigestAlgorithm, Bool)? {
        let digests: [String: DigestAlgorithm] = ["SHA256": .sha256, "SHA384": .sha384, "SHA512": .sha512]
        for (prefix, digest) in digests {
            if name == prefix + "WithECEncryption" { return (digest, true) }
            if name == prefix + "WithRSAEncryption" { return (digest, false) }
        }
        return nil
    }

    /// True when this is the scheme and hash asicfs asked for.
    func matches(_ algorithm: SignatureAlgorithm) -> Bool {
        digest == algorithm.digest && isEC == (algorithm.scheme == .ecdsa) && algorithm.scheme != .rsaPSS
    }
}

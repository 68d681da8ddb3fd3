import Crypto
import Foundation
import SafeXML

/// What can be read from one XAdES signature without validating it: who signed, when they said
/// they signed, and when the time-stamp says. Validation comes with the signature core.
public struct SignatureSummary: Sendable {
    public let id: String?
    /// The signature file it came from, e.g. META-INF/signatures0.xml.
    public let file: String
    public let certificate: Certificate?
    public let claimedSigningTime: String?
    public let timeStampTime: Date?
    /// The raw bytes of the whole signature file (a file may hold several signatures).
    public let documentBytes: [UInt8]

    /// The signer's name as the certificate gives it (CN), for folder names and listings.
    public var signerName: String {
        certificate?.commonName ?? certificate?.subjectLine ?? "unknown signer"
    }

    /// Reads every ds:Signature in a signature file; an unreadable file yields one summary with
    /// nothing known, so it is still listed.
    public static func read(file: String, bytes: [UInt8]) -> [SignatureSummary] {
        guard let signatures = try? XAdESSignature.parse(file: file, bytes: bytes) else {
            return [SignatureSummary(id: nil, file: file, certificate: nil, claimedSigningTime: nil, timeStampTime: nil,
                                     documentBytes: bytes)]
        }
        return signatures.map { signature in
            let timeStamp = signature.signatureTimeStamps.first.flatMap { try? TimeStampToken(der: $0.token) }
            return SignatureSummary(id: signature.id, file: file, certificate: signature.signingCertificate,
                                    claimedSigningTime: signature.signingTime, timeStampTime: timeStamp?.genTime,
                                    documentBytes: bytes)
        }
    }
}

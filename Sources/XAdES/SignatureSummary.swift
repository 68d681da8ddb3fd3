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

    public static let dsNamespace = "http://www.w3.org/2000/09/xmldsig#"
    public static let xadesNamespace = "http://uri.etsi.org/01903/v1.3.2#"

    /// The signer's name as the certificate gives it (CN), for folder names and listings.
    public var signerName: String {
        certificate?.commonName ?? certificate?.subjectLine ?? "unknown signer"
    }

    /// Reads every ds:Signature in a signature file; an unreadable file yields one summary with
    /// nothing known, so it is still listed.
    public static func read(file: String, bytes: [UInt8]) -> [SignatureSummary] {
        guard let document = try? SafeXMLDocument.parse(bytes, name: file), let root = document.root else {
            return [SignatureSummary(id: nil, file: file, certificate: nil, claimedSigningTime: nil, timeStampTime: nil,
                                     documentBytes: bytes)]
        }
        var signatures = root.localName == "Signature" && root.namespaceURI == dsNamespace ? [root] : []
        signatures += root.descendants("Signature", namespace: dsNamespace)
        return signatures.map { signature in
            let certificate = signature.firstDescendant("X509Certificate", namespace: dsNamespace)
                .flatMap { Data(base64Encoded: $0.text, options: .ignoreUnknownCharacters) }
                .flatMap { try? Certificate(der: [UInt8]($0)) }
            let signingTime = signature.firstDescendant("SigningTime", namespace: xadesNamespace)?.text
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let timeStamp = signature.firstDescendant("SignatureTimeStamp", namespace: xadesNamespace)?
                .firstDescendant("EncapsulatedTimeStamp", namespace: xadesNamespace)
                .flatMap { Data(base64Encoded: $0.text, options: .ignoreUnknownCharacters) }
                .flatMap { try? TimeStampToken(der: [UInt8]($0)) }
            return SignatureSummary(id: signature.attribute("Id", namespace: nil), file: file, certificate: certificate,
                                    claimedSigningTime: signingTime, timeStampTime: timeStamp?.genTime,
                                    documentBytes: bytes)
        }
    }
}

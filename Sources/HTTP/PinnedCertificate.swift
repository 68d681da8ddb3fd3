import Foundation

/// A TLS server certificate to accept; with pins set, they are the only trust anchors of the
/// client (the system CA store is not consulted), so any other certificate fails the handshake
/// before a byte of the request is sent.
public enum PinnedCertificate: Sendable, Equatable {
    case pemFile(String)
    /// PEM text (built-in anchors).
    case pem(String)
    case der([UInt8])

    /// The certificates as one PEM bundle, the form libcurl's CAINFO_BLOB reads.
    static func pemBundle(_ pins: [PinnedCertificate]) throws(HTTPError) -> String {
        var bundle = ""
        for pin in pins {
            switch pin {
            case .pemFile(let path):
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw .pinnedCertificateUnreadable("cannot read \(path)")
                }
                bundle += try pem(text, from: "\(path) holds")
            case .pem(let text):
                bundle += try pem(text, from: "the PEM text holds")
            case .der(let der):
                // A DER certificate is one SEQUENCE; anything else is a caller mistake worth naming.
                guard der.first == 0x30, der.count > 16 else {
                    throw .pinnedCertificateUnreadable("the DER bytes are not a certificate")
                }
                let base64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
                bundle += "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n"
            }
        }
        return bundle
    }

    /// PEM text ending in a line end, if it holds a certificate (`from` names it in the error).
    private static func pem(_ text: String, from source: String) throws(HTTPError) -> String {
        guard text.contains("-----BEGIN CERTIFICATE-----") else { throw .pinnedCertificateUnreadable("\(source) no PEM certificate") }
        return text.hasSuffix("\n") ? text : text + "\n"
    }
}

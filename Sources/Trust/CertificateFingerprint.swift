import Foundation
import Crypto

/// A certificate known by the SHA-256 of its DER form: how the built-in LOTL signers and
/// `tsl-signer-sha256` name who may sign a list. Only the fact is kept, never the certificate;
/// the list brings its signer's certificate in its own KeyInfo.
public struct CertificateFingerprint: Sendable, Equatable, CustomStringConvertible {
    public let sha256: [UInt8]
    /// The subject's short name, or nil for a fingerprint the user configured.
    public let name: String?
    /// The certificate's notAfter as "YYYY-MM-DD" (built-in facts; for `--version --verbose`).
    public let notAfter: String?

    /// `hex`: 64 hexadecimal digits, with or without `:` or spaces between the bytes (as openssl
    /// and the tables of sources print them). Nil when it is anything else.
    public init?(hex: String, name: String? = nil, notAfter: String? = nil) {
        let digits = hex.filter { $0 != ":" && $0 != " " }
        guard digits.count == 64, digits.allSatisfy(\.isHexDigit) else { return nil }
        var bytes: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            bytes.append(UInt8(digits[index..<next], radix: 16)!)
            index = next
        }
        sha256 = bytes
        self.name = name
        self.notAfter = notAfter
    }

    public func matches(_ certificate: Certificate) -> Bool { Digest.hash(certificate.der, .sha256) == sha256 }

    /// Upper-case hex with colons, the way `openssl x509 -fingerprint -sha256` prints it.
    public var hex: String { sha256.map { String(format: "%02X", $0) }.joined(separator: ":") }

    public var description: String { name.map { "\($0) (SHA-256 \(hex))" } ?? "SHA-256 \(hex)" }
}

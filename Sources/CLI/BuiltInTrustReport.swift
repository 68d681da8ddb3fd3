import Crypto
import Foundation
import Trust

/// `asicfs --version --verbose`: the built-in trust (LOTL signers by fingerprint, SK service TLS
/// key pins) with when each certificate ends, and a warning for those within a year of it, so a
/// packager or an admin sees in time that a release with new facts (or `tsl-signer-sha256`,
/// `tsl-cert`, `*.tls-cert`) is needed.
enum BuiltInTrustReport {
    /// One line to print: a name, its end date, and what identifies it.
    private struct Fact {
        let name: String
        let notAfter: String?
        let identity: String
    }

    static func text(now: Date = Date()) -> String {
        let signer = { (fingerprint: CertificateFingerprint) in
            Fact(name: fingerprint.name ?? "?", notAfter: fingerprint.notAfter, identity: "SHA-256 \(fingerprint.hex)")
        }
        let pin = { (pin: SPKIPin) in
            Fact(name: pin.name, notAfter: pin.notAfter, identity: "key SHA-256 (base64) \(pin.sha256Base64)")
        }
        let groups: [(String, [Fact])] = [
            ("EU list of trusted lists, signers", BuiltInTrust.euListOfTrustedListsSigners.map(signer)),
            ("Estonian test list of trusted lists (tsl = test), signer", BuiltInTrust.testListOfTrustedListsSigners.map(signer)),
            ("Mobile-ID and Smart-ID TLS key pins (SK's hosts, over the system CA store)", BuiltInTrust.skServiceTLSPins.map(pin)),
        ]
        var lines = ["built-in trust:"]
        for (title, facts) in groups {
            lines.append("  \(title):")
            for fact in facts {
                lines.append("    \(fact.name)" + (fact.notAfter.map { ", valid until \($0)\(note($0, now: now))" } ?? ""))
                lines.append("      \(fact.identity)")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// "" when far off, else a warning or EXPIRED (two spaces before, as a column).
    private static func note(_ notAfter: String, now: Date) -> String {
        guard let date = ISO8601DateFormatter().date(from: notAfter + "T23:59:59Z") else { return "" }
        let days = Int(date.timeIntervalSince(now) / 86_400)
        return days < 0 ? "  EXPIRED" : days < 365 ? "  warning: expires in \(days) days" : ""
    }
}

import Crypto
import Foundation
import Trust

/// `asicfs --version --verbose`: the built-in trust (LOTL signers, SK service TLS anchors) with
/// when each expires, and a warning for those within a year of it, so a packager or an admin
/// sees in time that a release with new certificates (or `tsl-cert`) is needed.
enum BuiltInTrustReport {
    static func text(now: Date = Date()) -> String {
        let groups: [(String, [String])] = [
            ("EU list of trusted lists, signers", BuiltInTrust.euListOfTrustedListsSigners),
            ("Estonian test list of trusted lists (tsl = test), signer", BuiltInTrust.testListOfTrustedListsSigners),
            ("Mobile-ID and Smart-ID TLS anchors (SK's hosts)", BuiltInTrust.skServiceTLSAnchors),
        ]
        var lines = ["built-in trust:"]
        for (title, pems) in groups {
            lines.append("  \(title):")
            for pem in pems {
                guard let certificate = try? Certificate.parse(Array(pem.utf8)) else {
                    lines.append("    (a certificate that cannot be read)")
                    continue
                }
                let name = certificate.commonName ?? certificate.subjectLine
                guard let notAfter = certificate.notAfter else {
                    lines.append("    \(name)")
                    continue
                }
                let days = Int(notAfter.timeIntervalSince(now) / 86_400)
                let date = String(ISOTime.string(notAfter).prefix(10))
                let note = days < 0 ? "  EXPIRED" : days < 365 ? "  warning: expires in \(days) days" : ""
                lines.append("    \(name), valid until \(date)\(note)")
            }
        }
        return lines.joined(separator: "\n")
    }
}

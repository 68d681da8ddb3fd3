import Crypto
import Foundation

/// CDOC2 key labels (spec §2.6): free text, or a `data:` URL of `key=value` pairs. Only for
/// showing and choosing a recipient: a label that does not parse is shown as written and never
/// stops a decryption (the KEK uses the label exactly as stored).
enum CDOC2KeyLabel {
    /// The pairs of a `data:` label, keys lower-cased; nil for free text or a label that does not parse.
    static func fields(_ label: String) -> [String: String]? {
        guard label.lowercased().hasPrefix("data:") else { return nil }
        var rest = Substring(label.dropFirst(5))
        var base64 = false
        if let comma = rest.firstIndex(of: ","), !rest[..<comma].contains("=") {
            base64 = rest[..<comma].lowercased().hasSuffix(";base64")
            rest = rest[rest.index(after: comma)...]
        }
        var body = String(rest)
        if base64 {
            guard let decoded = Data(base64Encoded: body) else { return nil }
            body = String(decoding: decoded, as: UTF8.self)
        }
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&", omittingEmptySubsequences: true) {
            guard let equals = pair.firstIndex(of: "="),
                  let key = percentDecoded(pair[..<equals]), let value = percentDecoded(pair[pair.index(after: equals)...])
            else { return nil }
            fields[key.lowercased()] = value
        }
        guard fields["v"] != nil, fields["type"] != nil else { return nil }
        return fields
    }

    /// What to show for a label: the holder's name, a file or the label field; else the label itself.
    static func displayName(_ label: String) -> String {
        guard let fields = fields(label) else { return label }
        let name: String?
        switch fields["type"]?.lowercased() {
        case "id-card", "digi-id", "digi-id e-resident":
            name = fields["cn"] ?? [fields["first_name"], fields["last_name"]].compactMap { $0 }.joined(separator: " ")
        case "cert": name = fields["cn"] ?? fields["file"]
        case "pub_key": name = fields["label"] ?? fields["file"]
        case "secret", "pw": name = fields["label"]
        case "auth": name = fields["sn"]
        default: name = fields["label"] ?? fields["cn"]
        }
        guard let name, !name.isEmpty else { return label }
        return name
    }

    /// The label libcdoc writes for a certificate: an Estonian eID (told by its policy OIDs) as
    /// type, cn, serial_number, first_name, last_name; any other certificate as type `cert`, cn
    /// and the SHA-1 of the certificate.
    static func forCertificate(_ certificate: Certificate) -> String {
        let cn = certificate.commonName ?? ""
        if let type = eIDType(policies: certificate.policies) {
            return dataLabel(["type": type, "cn": cn, "serial_number": certificate.serialNumberAttribute ?? "",
                              "first_name": certificate.givenName ?? "", "last_name": certificate.surname ?? ""])
        }
        return dataLabel(["type": "cert", "cn": cn, "cert_sha1": Digest.hash(certificate.der, .sha1).map { hex($0) }.joined()])
    }

    /// ID-card, Digi-ID or Digi-ID E-RESIDENT from the SK/Zetes policy OIDs (a test prefix 2.999. ignored).
    static func eIDType(policies: [String]) -> String? {
        for raw in policies {
            let policy = raw.hasPrefix("2.999.") ? String(raw.dropFirst(6)) : raw
            if ["1.3.6.1.4.1.51361.1.1.3", "1.3.6.1.4.1.51361.1.2.3"].contains(where: policy.hasPrefix) { return "Digi-ID" }
            if ["1.3.6.1.4.1.51361.1.1.4", "1.3.6.1.4.1.51361.1.2.4"].contains(where: policy.hasPrefix) { return "Digi-ID E-RESIDENT" }
            if ["1.3.6.1.4.1.51361.1.1", "1.3.6.1.4.1.51455.1.1", "1.3.6.1.4.1.51361.1.2", "1.3.6.1.4.1.51455.1.2"]
                .contains(where: policy.hasPrefix) { return "ID-card" }
        }
        return nil
    }

    /// Labels for bare keys, secrets and passwords.
    static func forKind(_ type: String, label: String) -> String { dataLabel(["type": type, "label": label]) }

    /// `data:,v=1` and then the pairs in sorted key order, URL-encoded (as libcdoc writes them).
    static func dataLabel(_ fields: [String: String]) -> String {
        (["data:,v=1"] + fields.keys.filter { $0 != "v" }.sorted().map { "\(percentEncoded($0))=\(percentEncoded(fields[$0]!))" })
            .joined(separator: "&")
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }

    private static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            let unreserved = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || [0x2D, 0x2E, 0x5F, 0x7E].contains(byte)
            out += unreserved ? String(UnicodeScalar(byte)) : "%" + hex(byte).uppercased()
        }
        return out
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == 0x25 {
                guard iterator.count >= 2, let value = UInt8(String(decoding: iterator.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                bytes.append(value)
                iterator = iterator.dropFirst(2)
            } else {
                bytes.append(byte == 0x2B ? 0x20 : byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

import ASiC
import Crypto
import Foundation

/// The four verdicts asicfs reports (ETSI EN 319 102-1's TOTAL-PASSED, TOTAL-FAILED and
/// INDETERMINATE, with PASSED split by whether there are warnings).
public enum Verdict: String, Sendable, Comparable, Codable {
    case valid = "VALID"
    case validWithWarnings = "VALID_WITH_WARNINGS"
    case indeterminate = "INDETERMINATE"
    case invalid = "INVALID"

    private var rank: Int {
        switch self {
        case .valid: 0
        case .validWithWarnings: 1
        case .indeterminate: 2
        case .invalid: 3
        }
    }

    public static func < (a: Verdict, b: Verdict) -> Bool { a.rank < b.rank }
    public var isAcceptable: Bool { self == .valid || self == .validWithWarnings }
}

/// One thing validation found. `severity` is the verdict it forces on its own.
public struct Finding: Sendable, Equatable, Codable {
    public enum Severity: String, Sendable, Codable {
        case warning, indeterminate, invalid

        var verdict: Verdict {
            switch self {
            case .warning: .validWithWarnings
            case .indeterminate: .indeterminate
            case .invalid: .invalid
            }
        }
    }

    public let severity: Severity
    /// A stable name for scripts (e.g. `reference-digest`, `signature-value`, `signer-not-trusted`):
    /// one of `FindingCode`, whose list the man page documents.
    public let code: String
    public let message: String

    public init(_ severity: Severity, _ code: FindingCode, _ message: String) {
        self.severity = severity
        self.code = code.rawValue
        self.message = message
    }
}

/// What validation says about one signature (or ASiC-S time-stamp).
public struct SignatureReport: Sendable, Codable {
    public var index: Int
    public var file: String
    public var id: String?
    public var kind: String = "XAdES"
    public var profile: String = ""
    public var signerName: String?
    public var personalCode: String?
    public var country: String?
    public var issuer: String?
    public var certificateSerial: String?
    public var certificateNotAfter: Date?
    public var signatureMethod: String?
    public var claimedSigningTime: String?
    public var timeStampTime: Date?
    public var timeStampAuthority: String?
    public var ocspProducedAt: Date?
    public var ocspResponder: String?
    /// "QES" (qualified, on a QSCD), "AdES/QC" (qualified certificate, no QSCD) or "AdES".
    public var qualification: String?
    public var signedFiles: [String] = []
    public var roles: [String] = []
    public var productionPlace: [String: String] = [:]
    public var findings: [Finding] = []
    /// The signature value, chain, tokens and responses the verdict rests on (`--report`).
    public var evidence = SignatureEvidence()

    public init(index: Int, file: String, id: String?) {
        self.index = index
        self.file = file
        self.id = id
    }

    public var verdict: Verdict { findings.map(\.severity.verdict).max() ?? .valid }

    /// The verdict without the findings of `codes` (a signing's self-check: what the profile asked for).
    public func verdict(ignoring codes: Set<FindingCode>) -> Verdict {
        findings.filter { finding in !codes.contains { $0.rawValue == finding.code } }.map(\.severity.verdict).max() ?? .valid
    }
    public var errors: [Finding] { findings.filter { $0.severity != .warning } }
    public var warnings: [Finding] { findings.filter { $0.severity == .warning } }

    mutating func add(_ severity: Finding.Severity, _ code: FindingCode, _ message: String) {
        let finding = Finding(severity, code, message)
        if !findings.contains(finding) { findings.append(finding) }
    }

    /// `status` file: the verdict, then one reason a line.
    public var statusText: String {
        ([verdict.rawValue] + findings.map { "\($0.severity.rawValue): \(PrintableText.escaped($0.message))" })
            .joined(separator: "\n") + "\n"
    }

    /// `report` file and `asicfs verify`: a readable summary of everything checked, one line
    /// per field (the values come from the container, so each is escaped: `PrintableText`).
    public var text: String {
        var lines = ["Signature \(index) (\(PrintableText.escaped(id ?? "no Id")), \(PrintableText.escaped(file))): \(verdict.rawValue)"]
        func field(_ name: String, _ value: String?) {
            if let value, !value.isEmpty {
                lines.append("  \(name.padding(toLength: 17, withPad: " ", startingAt: 0))\(PrintableText.escaped(value))")
            }
        }
        field("signer", signerName)
        field("personal code", personalCode)
        field("country", country)
        field("issuer", issuer)
        field("profile", profile)
        field("method", signatureMethod)
        field("qualification", qualification)
        field("claimed time", claimedSigningTime)
        field("time-stamp", timeStampTime.map(ISOTime.string))
        field("time-stamp by", timeStampAuthority)
        field("OCSP produced", ocspProducedAt.map(ISOTime.string))
        field("OCSP responder", ocspResponder)
        field("roles", roles.isEmpty ? nil : roles.joined(separator: ", "))
        let placeOrder = ["City", "StreetAddress", "StateOrProvince", "PostalCode", "CountryName"]
        field("place", productionPlace.isEmpty ? nil
            : productionPlace.sorted { (placeOrder.firstIndex(of: $0.key) ?? 9) < (placeOrder.firstIndex(of: $1.key) ?? 9) }
                .map(\.value).joined(separator: ", "))
        field("signed files", signedFiles.map(PrintableText.escaped).joined(separator: ", "))
        for finding in findings { lines.append("  \(finding.severity.rawValue): \(PrintableText.escaped(finding.message))") }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// The whole container: every signature, and the worst verdict among them.
public struct ContainerReport: Sendable, Codable {
    public var path: String
    public var format: String
    public var dataFiles: [String]
    public var signatures: [SignatureReport]
    /// Problems of the container itself (e.g. a signature file that cannot be read).
    public var findings: [Finding] = []

    public init(path: String, format: String, dataFiles: [String], signatures: [SignatureReport]) {
        self.path = path
        self.format = format
        self.dataFiles = dataFiles
        self.signatures = signatures
    }

    /// VALID only when there is at least one signature and every one is acceptable.
    public var verdict: Verdict {
        let worst = (signatures.map(\.verdict) + findings.map(\.severity.verdict)).max() ?? .indeterminate
        return signatures.isEmpty ? max(worst, .indeterminate) : worst
    }

    public var text: String {
        var out = "\(PrintableText.escaped(path)): \(format), \(dataFiles.count) data file\(dataFiles.count == 1 ? "" : "s"), "
            + "\(signatures.count) signature\(signatures.count == 1 ? "" : "s")\n"
        for finding in findings { out += "  \(finding.severity.rawValue): \(PrintableText.escaped(finding.message))\n" }
        for signature in signatures { out += signature.text }
        if signatures.isEmpty { out += "no signatures\n" }
        out += "Result: \(verdict.rawValue)\n"
        return out
    }

    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISOTime.string(date))
        }
        var wrapper = JSONReport(report: self)
        wrapper.verdict = verdict.rawValue
        guard let data = try? encoder.encode(wrapper) else { return "{}" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

/// The JSON shape of `asicfs verify --json` (documented in the man page).
struct JSONReport: Encodable {
    let report: ContainerReport
    var verdict = ""

    enum Keys: String, CodingKey { case formatVersion = "format_version", path, format, dataFiles = "data_files", verdict, findings, signatures }
    enum SignatureKeys: String, CodingKey {
        case index, file, id, kind, profile, verdict, signer, personalCode = "personal_code", country, issuer
        case serial, certificateNotAfter = "certificate_not_after", signatureMethod = "signature_method"
        case claimedSigningTime = "claimed_signing_time", timeStampTime = "timestamp_time"
        case timeStampAuthority = "timestamp_authority", ocspProducedAt = "ocsp_produced_at", ocspResponder = "ocsp_responder"
        case qualification, signedFiles = "signed_files", roles, productionPlace = "production_place", errors, warnings
    }

    static func snakeCase(_ name: String) -> String {
        var out = ""
        for character in name {
            if character.isUppercase {
                if !out.isEmpty { out += "_" }
                out += character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(JSONFormat.version, forKey: .formatVersion)
        try container.encode(report.path, forKey: .path)
        try container.encode(report.format, forKey: .format)
        try container.encode(report.dataFiles, forKey: .dataFiles)
        try container.encode(verdict, forKey: .verdict)
        try container.encode(report.findings, forKey: .findings)
        var list = container.nestedUnkeyedContainer(forKey: .signatures)
        for signature in report.signatures {
            var item = list.nestedContainer(keyedBy: SignatureKeys.self)
            try item.encode(signature.index, forKey: .index)
            try item.encode(signature.file, forKey: .file)
            try item.encodeIfPresent(signature.id, forKey: .id)
            try item.encode(signature.kind, forKey: .kind)
            try item.encode(signature.profile, forKey: .profile)
            try item.encode(signature.verdict.rawValue, forKey: .verdict)
            try item.encodeIfPresent(signature.signerName, forKey: .signer)
            try item.encodeIfPresent(signature.personalCode, forKey: .personalCode)
            try item.encodeIfPresent(signature.country, forKey: .country)
            try item.encodeIfPresent(signature.issuer, forKey: .issuer)
            try item.encodeIfPresent(signature.certificateSerial, forKey: .serial)
            try item.encodeIfPresent(signature.certificateNotAfter, forKey: .certificateNotAfter)
            try item.encodeIfPresent(signature.signatureMethod, forKey: .signatureMethod)
            try item.encodeIfPresent(signature.claimedSigningTime, forKey: .claimedSigningTime)
            try item.encodeIfPresent(signature.timeStampTime, forKey: .timeStampTime)
            try item.encodeIfPresent(signature.timeStampAuthority, forKey: .timeStampAuthority)
            try item.encodeIfPresent(signature.ocspProducedAt, forKey: .ocspProducedAt)
            try item.encodeIfPresent(signature.ocspResponder, forKey: .ocspResponder)
            try item.encodeIfPresent(signature.qualification, forKey: .qualification)
            try item.encode(signature.signedFiles, forKey: .signedFiles)
            try item.encode(signature.roles, forKey: .roles)
            // XAdES names (City, StateOrProvince, ...) in the one key style: city, state_or_province.
            try item.encode(Dictionary(signature.productionPlace.map { (Self.snakeCase($0.key), $0.value) },
                                       uniquingKeysWith: { first, _ in first }), forKey: .productionPlace)
            try item.encode(signature.errors, forKey: .errors)
            try item.encode(signature.warnings, forKey: .warnings)
        }
    }
}

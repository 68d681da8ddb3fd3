import Crypto

/// Whether a signing certificate is qualified (QC), on a qualified device (QSCD), or an e-seal,
/// and why: first from its own qcStatements and policies, then overridden by the trusted-list
/// qualifiers whose criteria select it (as libdigidocpp does; later qualifiers win).
public struct Qualification: Sendable, Equatable, CustomStringConvertible {
    public let isQCCompliant: Bool
    public let isQSCD: Bool
    public let isESeal: Bool
    /// One sentence per decision, in the order they were taken.
    public let reasons: [String]

    /// What step 12 of the checklist requires: QC on a QSCD, or an e-seal.
    public var meetsRequirements: Bool { (isQCCompliant && isQSCD) || isESeal }

    public var description: String {
        let verdict = meetsRequirements ? "meets the qualification requirements" : "does not meet the qualification requirements"
        return verdict + " (" + reasons.joined(separator: "; ") + ")"
    }

    enum OID {
        static let qcCompliance = "0.4.0.1862.1.1"
        static let qcSSCD = "0.4.0.1862.1.4"
        static let qcTypeESeal = "0.4.0.1862.1.6.2"
        static let qscdPolicies: Set<String> = ["0.4.0.1456.1.1", "0.4.0.194112.1.2", "0.4.0.194112.1.3"]
        static let legalPersonPolicy = "0.4.0.194112.1.1"
    }

    /// The qualifier URIs of TS 119 612 that change the verdict.
    public enum Qualifier {
        static let base = "http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/"
        public static let qcStatement = base + "QCStatement"
        public static let qcForESig = base + "QCForESig"
        public static let notQualified = base + "NotQualified"
        public static let qcWithSSCD = base + "QCWithSSCD"
        public static let qcWithQSCD = base + "QCWithQSCD"
        public static let qcNoSSCD = base + "QCNoSSCD"
        public static let qcNoQSCD = base + "QCNoQSCD"
        public static let qcForLegalPerson = base + "QCForLegalPerson"
        public static let qcForESeal = base + "QCForESeal"
    }

    public static func of(_ certificate: Certificate, qualifications: [QualificationElement]) -> Qualification {
        let statements = Set(certificate.qcStatements)
        let policies = Set(certificate.policies)
        var reasons: [String] = []
        var qc = statements.contains(OID.qcCompliance)
        reasons.append(qc ? "the certificate states QcCompliance" : "the certificate does not state QcCompliance")
        let qscdPolicy = policies.intersection(OID.qscdPolicies).sorted().first
        var qscd = statements.contains(OID.qcSSCD) || qscdPolicy != nil
        reasons.append(statements.contains(OID.qcSSCD) ? "the certificate states QcSSCD"
            : qscdPolicy.map { "the certificate has QSCD policy \($0)" } ?? "the certificate states no QSCD")
        var eseal = statements.contains(OID.qcTypeESeal) || policies.contains(OID.legalPersonPolicy)
        if eseal { reasons.append("the certificate is an e-seal certificate") }

        let usage = certificate.keyUsageNames
        for element in qualifications where element.criteria.selects(keyUsage: usage, policies: policies) {
            for uri in element.qualifiers {
                let name = uri.hasPrefix(Qualifier.base) ? String(uri.dropFirst(Qualifier.base.count)) : uri
                switch uri {
                case Qualifier.qcStatement, Qualifier.qcForESig: qc = true
                case Qualifier.notQualified: qc = false
                case Qualifier.qcWithSSCD, Qualifier.qcWithQSCD: qscd = true
                case Qualifier.qcNoSSCD, Qualifier.qcNoQSCD: qscd = false
                case Qualifier.qcForLegalPerson, Qualifier.qcForESeal: eseal = true
                default: continue
                }
                reasons.append("the trusted list says \(name)")
            }
        }
        return Qualification(isQCCompliant: qc, isQSCD: qscd, isESeal: eseal, reasons: reasons)
    }
}

extension QualificationCriteria {
    /// Whether the criteria select a certificate with these key usages and policies. An assert
    /// other than all, atLeastOne and none selects nothing (the qualifier is not understood).
    func selects(keyUsage: Set<String>, policies: Set<String>) -> Bool {
        let results = keyUsages.map { bits in bits.allSatisfy { keyUsage.contains($0.key) == $0.value } }
            + policySets.map { $0.allSatisfy(policies.contains) }
        switch assert {
        case "all": return results.allSatisfy { $0 }
        case "atLeastOne": return results.contains(true)
        case "none": return !results.contains(true)
        default: return false
        }
    }
}

extension Certificate {
    static let keyUsageBitNames = ["digitalSignature", "nonRepudiation", "keyEncipherment", "dataEncipherment",
                                   "keyAgreement", "keyCertSign", "crlSign", "encipherOnly", "decipherOnly"]

    /// The keyUsage bits set, by their TS 119 612 `KeyUsageBit` names; empty without the extension.
    var keyUsageNames: Set<String> {
        // KeyUsage ::= BIT STRING: 03 len unused-bits byte0 byte1; bit 0 is byte0's top bit.
        guard let value = extensionValue(oid: "2.5.29.15"), value.count >= 3, value[0] == 0x03 else { return [] }
        let bits = Array(value.dropFirst(3))
        var names: Set<String> = []
        for (index, name) in Self.keyUsageBitNames.enumerated() where index / 8 < bits.count {
            if bits[index / 8] & (0x80 >> UInt8(index % 8)) != 0 { names.insert(name) }
        }
        return names
    }
}

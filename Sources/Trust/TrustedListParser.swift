import Crypto
import Foundation
import SafeXML

/// The namespaces of TS 119 612 documents.
enum TSLNamespace {
    static let tsl = "http://uri.etsi.org/02231/v2#"
    static let additionalTypes = "http://uri.etsi.org/02231/v2/additionaltypes#"
    static let ecc = "http://uri.etsi.org/TrstSvc/SvcInfoExt/eSigDir-1999-93-EC-TrustedList/#"
    static let xades = "http://uri.etsi.org/01903/v1.3.2#"
    static let xml = "http://www.w3.org/XML/1998/namespace"
}

extension TrustedList {
    /// Reads a list without checking its signature (`TrustedListLoader` checks it first).
    public static func parse(_ bytes: [UInt8], source: String) throws(TrustedListError) -> TrustedList {
        let document: SafeXMLDocument
        do { document = try SafeXMLDocument.parse(bytes, name: source) } catch {
            throw TrustedListError("trusted list \(source) cannot be read: \(error)")
        }
        guard let root = document.root else { throw TrustedListError("trusted list \(source) is empty") }
        return try parse(root: root, source: source)
    }

    static func parse(root: XMLElement, source: String) throws(TrustedListError) -> TrustedList {
        guard root.localName == "TrustServiceStatusList", root.namespaceURI == TSLNamespace.tsl else {
            throw TrustedListError("\(source) is not a trusted list (its root element is \(root.localName), not TrustServiceStatusList)")
        }
        guard let scheme = root.tsl("SchemeInformation") else {
            throw TrustedListError("trusted list \(source) has no SchemeInformation")
        }
        let services = (root.tsl("TrustServiceProviderList")?.tslChildren("TrustServiceProvider") ?? [])
            .flatMap(parseProvider)
        return TrustedList(
            territory: scheme.tsl("SchemeTerritory")?.trimmedText ?? "",
            sequenceNumber: Int(scheme.tsl("TSLSequenceNumber")?.trimmedText ?? "") ?? 0,
            type: scheme.tsl("TSLType")?.trimmedText ?? "",
            operatorName: scheme.tsl("SchemeOperatorName").map(englishName) ?? "",
            issueDate: scheme.tsl("ListIssueDateTime").flatMap { XMLDateTime.parse($0.text) },
            nextUpdate: scheme.tsl("NextUpdate")?.tsl("dateTime").flatMap { XMLDateTime.parse($0.text) },
            pointers: (scheme.tsl("PointersToOtherTSL")?.tslChildren("OtherTSLPointer") ?? []).map(parsePointer),
            services: services,
            source: source)
    }

    private static func parsePointer(_ pointer: XMLElement) -> TrustedListPointer {
        var mimeType: String?, territory: String?, type: String?
        for info in pointer.tsl("AdditionalInformation")?.tslChildren("OtherInformation") ?? [] {
            if let mime = info.child("MimeType", namespace: TSLNamespace.additionalTypes) { mimeType = mime.trimmedText }
            if let value = info.tsl("SchemeTerritory") { territory = value.trimmedText }
            if let value = info.tsl("TSLType") { type = value.trimmedText }
        }
        let signers = (pointer.tsl("ServiceDigitalIdentities")?.tslChildren("ServiceDigitalIdentity") ?? [])
            .flatMap(certificates)
        return TrustedListPointer(location: pointer.tsl("TSLLocation")?.trimmedText ?? "", mimeType: mimeType,
                                  territory: territory, type: type, signers: signers)
    }

    private static func parseProvider(_ provider: XMLElement) -> [TrustService] {
        let providerName = provider.tsl("TSPInformation")?.tsl("TSPName").map(englishName) ?? ""
        return (provider.tsl("TSPServices")?.tslChildren("TSPService") ?? []).compactMap { service in
            guard let information = service.tsl("ServiceInformation"),
                  let current = parsePeriod(information) else { return nil }
            let history = service.tsl("ServiceHistory")?.tslChildren("ServiceHistoryInstance") ?? []
            let identities = ([information] + history).flatMap { $0.tslChildren("ServiceDigitalIdentity") }
            var unique: [Certificate] = []
            for certificate in identities.flatMap(certificates) where !unique.contains(where: { $0 == certificate }) {
                unique.append(certificate)
            }
            return TrustService(providerName: providerName,
                                name: information.tsl("ServiceName").map(englishName) ?? "",
                                certificates: unique,
                                periods: [current] + history.compactMap(parsePeriod))
        }
    }

    /// `ServiceInformation` and `ServiceHistoryInstance` share these elements. An entry without
    /// a type, status or readable starting time says nothing usable and is left out.
    private static func parsePeriod(_ element: XMLElement) -> ServicePeriod? {
        guard let type = element.tsl("ServiceTypeIdentifier")?.trimmedText,
              let status = element.tsl("ServiceStatus")?.trimmedText,
              let start = element.tsl("StatusStartingTime").flatMap({ XMLDateTime.parse($0.text) }) else { return nil }
        let extensions = element.tsl("ServiceInformationExtensions")?.tslChildren("Extension") ?? []
        let qualifications = extensions
            .compactMap { $0.child("Qualifications", namespace: TSLNamespace.ecc) }
            .flatMap { $0.children("QualificationElement", namespace: TSLNamespace.ecc) }
            .map(parseQualification)
        let additional = extensions.compactMap { $0.tsl("AdditionalServiceInformation")?.tsl("URI")?.trimmedText }
        return ServicePeriod(type: TrustServiceType(uri: type), status: TrustServiceStatus(uri: status), start: start,
                             qualifications: qualifications, additionalInformation: additional)
    }

    private static func parseQualification(_ element: XMLElement) -> QualificationElement {
        let ecc = TSLNamespace.ecc
        let qualifiers = (element.child("Qualifiers", namespace: ecc)?.children("Qualifier", namespace: ecc) ?? [])
            .compactMap { $0.attribute("uri", namespace: nil) }
        let list = element.child("CriteriaList", namespace: ecc)
        let keyUsages = (list?.children("KeyUsage", namespace: ecc) ?? []).map { usage in
            Dictionary(usage.children("KeyUsageBit", namespace: ecc).compactMap { bit -> (String, Bool)? in
                guard let name = bit.attribute("name", namespace: nil) else { return nil }
                return (name, bit.trimmedText == "true")
            }, uniquingKeysWith: { _, last in last })
        }
        let policySets = (list?.children("PolicySet", namespace: ecc) ?? []).map { set in
            set.children("PolicyIdentifier", namespace: ecc).compactMap { policy -> String? in
                guard let identifier = policy.child("Identifier", namespace: TSLNamespace.xades)?.trimmedText else { return nil }
                // OIDAsURN form: urn:oid:0.4.0.194112.1.2
                return identifier.hasPrefix("urn:oid:") ? String(identifier.dropFirst(8)) : identifier
            }
        }
        return QualificationElement(qualifiers: qualifiers,
                                    criteria: QualificationCriteria(assert: list?.attribute("assert", namespace: nil) ?? "all",
                                                                    keyUsages: keyUsages, policySets: policySets))
    }

    /// The X509Certificate values of a ServiceDigitalIdentity; unreadable ones are skipped
    /// (the same identity usually also names the subject, which we do not match on).
    private static func certificates(_ identity: XMLElement) -> [Certificate] {
        identity.tslChildren("DigitalId").compactMap { id in
            guard let text = id.tsl("X509Certificate")?.text,
                  let der = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else { return nil }
            return try? Certificate.parse(Array(der))
        }
    }

    /// The English `Name` of a multilingual name list, else the first one.
    private static func englishName(_ names: XMLElement) -> String {
        let all = names.tslChildren("Name")
        let english = all.first { $0.attribute("lang", namespace: TSLNamespace.xml) == "en" }
        return (english ?? all.first)?.trimmedText ?? ""
    }
}

extension XMLElement {
    func tsl(_ name: String) -> XMLElement? { child(name, namespace: TSLNamespace.tsl) }
    func tslChildren(_ name: String) -> [XMLElement] { children(name, namespace: TSLNamespace.tsl) }
    var trimmedText: String { text.trimmingCharacters(in: .whitespacesAndNewlines) }
}

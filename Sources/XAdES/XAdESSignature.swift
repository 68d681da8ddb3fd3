import Crypto
import Foundation
import SafeXML

public enum Namespace {
    public static let ds = "http://www.w3.org/2000/09/xmldsig#"
    public static let xades = "http://uri.etsi.org/01903/v1.3.2#"
    public static let xades141 = "http://uri.etsi.org/01903/v1.4.1#"
    public static let asic = "http://uri.etsi.org/02918/v1.2.1#"
    public static let signedPropertiesType = "http://uri.etsi.org/01903#SignedProperties"
}

/// Why a signature document cannot even be read as a XAdES signature.
public struct XAdESError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One ds:Reference of SignedInfo.
public struct SignatureReference: Sendable {
    public let id: String?
    public let uri: String
    public let type: String?
    public let digestAlgorithmURI: String
    public let digestValue: [UInt8]
    /// The C14N transform named in ds:Transforms, if any (SignedProperties references).
    public let transformURIs: [String]

    public var isSignedProperties: Bool { type == Namespace.signedPropertiesType }
    /// The data file this reference names (percent-decoding applied).
    public var dataFileName: String { ReferenceURI.name(of: uri) }
}

/// The signing-certificate reference in SignedProperties (V1 or V2).
public struct SigningCertificateReference: Sendable {
    public let isV2: Bool
    public let digestAlgorithmURI: String
    public let digestValue: [UInt8]
    public let issuerName: String?
    public let serialNumber: String?
    public let issuerSerialV2: [UInt8]?
}

/// A parsed ds:Signature with its XAdES properties. Holds the document it came from, so the
/// exact signed bytes can be canonicalized again for verification.
public final class XAdESSignature: @unchecked Sendable {
    public let file: String
    public let index: Int
    public let document: SafeXMLDocument
    public let element: XMLElement
    public let id: String?

    public let canonicalizationURI: String
    public let signatureMethodURI: String
    public let references: [SignatureReference]
    public let signatureValue: [UInt8]
    public let keyInfoCertificates: [Certificate]

    public let signingTime: String?
    public let signingCertificateReferences: [SigningCertificateReference]
    public let dataObjectFormats: [String: String]
    public let hasSignedDataObjectProperties: Bool
    /// AllDataObjectsTimeStamp and IndividualDataObjectsTimeStamp elements, in document order.
    public let dataObjectTimeStamps: [DataObjectTimeStamp]
    public let policyIdentifier: String?
    public let policySPURI: String?
    /// SignaturePolicyIdentifier holds both SignaturePolicyId and SignaturePolicyImplied (one of them is allowed).
    public let hasExplicitAndImpliedPolicy: Bool
    public let productionPlace: [String: String]
    public let claimedRoles: [String]

    /// Each SignatureTimeStamp: its canonicalization, its (first) token and how many tokens it holds.
    public let signatureTimeStamps: [(canonicalizationURI: String, token: [UInt8], tokenCount: Int)]
    public let certificateValues: [Certificate]
    public let ocspValues: [[UInt8]]
    public let hasRevocationValues: Bool
    public let archiveTimeStampCount: Int
    /// Each xades141:ArchiveTimeStamp, in document order.
    public let archiveTimeStamps: [ArchiveTimeStamp]
    public let unsignedSignatureProperties: XMLElement?
    public let keyInfo: XMLElement?

    /// One archive time-stamp (LTA): where it stands among the UnsignedSignatureProperties'
    /// children (everything before it is part of what it covers), its canonicalization, its token.
    public struct ArchiveTimeStamp: Sendable {
        public let position: Int
        public let canonicalizationURI: String
        public let token: [UInt8]
        public let tokenCount: Int
    }
    /// Problems found while reading that make the signature invalid (libdigidocpp refuses these on open).
    public let structuralProblems: [String]

    public var signingCertificate: Certificate? { keyInfoCertificates.first }
    public var canonicalization: CanonicalizationMethod? { CanonicalizationMethod(uri: canonicalizationURI) }
    public var signatureAlgorithm: SignatureAlgorithm? { AlgorithmURI.signature(signatureMethodURI) }
    public var dataReferences: [SignatureReference] { references.filter { !$0.isSignedProperties } }

    /// libdigidocpp's profile names: BES/EPES plus time-stamp, time-mark or archive suffixes.
    public var profile: String {
        let base = policyIdentifier == nil ? "BES" : "EPES"
        if !signatureTimeStamps.isEmpty { return base + (archiveTimeStampCount > 0 ? "/time-stamp-archive" : "/time-stamp") }
        if hasRevocationValues { return base + "/time-mark" }
        return base
    }

    public var isTimeMark: Bool { signatureTimeStamps.isEmpty && hasRevocationValues }

    public var signedInfo: XMLElement? { element.child("SignedInfo", namespace: Namespace.ds) }
    public var signatureValueElement: XMLElement? { element.child("SignatureValue", namespace: Namespace.ds) }

    /// Every ds:Signature in a signature file.
    public static func parse(file: String, bytes: [UInt8]) throws -> [XAdESSignature] {
        let document: SafeXMLDocument
        do { document = try SafeXMLDocument.parse(bytes, name: file) } catch let error as XMLError {
            throw XAdESError("\(file) is not readable XML: \(error.reason)")
        }
        guard let root = document.root else { throw XAdESError("\(file) is empty") }
        var signatures = root.localName == "Signature" && root.namespaceURI == Namespace.ds ? [root] : []
        if signatures.isEmpty { signatures = root.children("Signature", namespace: Namespace.ds) }
        guard !signatures.isEmpty else { throw XAdESError("\(file) holds no ds:Signature") }
        return signatures.enumerated().map { XAdESSignature(file: file, index: $0.offset, document: document, element: $0.element) }
    }

    init(file: String, index: Int, document: SafeXMLDocument, element: XMLElement) {
        self.file = file
        self.index = index
        self.document = document
        self.element = element
        var problems: [String] = []
        let ds = Namespace.ds, xades = Namespace.xades
        id = element.attribute("Id", namespace: nil)
        if id == nil { problems.append("the signature has no Id") }

        let signedInfo = element.child("SignedInfo", namespace: ds)
        if signedInfo == nil { problems.append("SignedInfo is missing") }
        canonicalizationURI = signedInfo?.child("CanonicalizationMethod", namespace: ds)?.attribute("Algorithm", namespace: nil) ?? ""
        signatureMethodURI = signedInfo?.child("SignatureMethod", namespace: ds)?.attribute("Algorithm", namespace: nil) ?? ""
        references = (signedInfo?.children("Reference", namespace: ds) ?? []).map { reference in
            SignatureReference(
                id: reference.attribute("Id", namespace: nil),
                uri: reference.attribute("URI", namespace: nil) ?? "",
                type: reference.attribute("Type", namespace: nil),
                digestAlgorithmURI: reference.child("DigestMethod", namespace: ds)?.attribute("Algorithm", namespace: nil) ?? "",
                digestValue: Self.base64(reference.child("DigestValue", namespace: ds)),
                transformURIs: reference.child("Transforms", namespace: ds)?.children("Transform", namespace: ds)
                    .compactMap { $0.attribute("Algorithm", namespace: nil) } ?? [])
        }
        signatureValue = Self.base64(element.child("SignatureValue", namespace: ds))
        keyInfoCertificates = (element.child("KeyInfo", namespace: ds)?.descendants("X509Certificate", namespace: ds) ?? [])
            .compactMap { try? Certificate(der: Self.base64($0)) }
        if keyInfoCertificates.isEmpty { problems.append("KeyInfo holds no signer certificate") }

        let objects = element.children("Object", namespace: ds)
        if objects.count > 1 { problems.append("the signature has more than one ds:Object") }
        let qualifying = objects.first?.children("QualifyingProperties", namespace: xades) ?? []
        if qualifying.count != 1 { problems.append("the signature needs exactly one QualifyingProperties, not \(qualifying.count)") }
        let signedProperties = qualifying.first?.child("SignedProperties", namespace: xades)
        let ssp = signedProperties?.child("SignedSignatureProperties", namespace: xades)
        if ssp == nil { problems.append("SignedSignatureProperties is missing") }
        signingTime = ssp?.child("SigningTime", namespace: xades)?.text.trimmingCharacters(in: .whitespacesAndNewlines)
        var certificateReferences: [SigningCertificateReference] = []
        for (name, isV2) in [("SigningCertificate", false), ("SigningCertificateV2", true)] {
            for holder in ssp?.children(name, namespace: xades) ?? [] {
                for cert in holder.children("Cert", namespace: xades) {
                    let digest = cert.child("CertDigest", namespace: xades)
                    let issuerSerial = cert.child("IssuerSerial", namespace: xades)
                    certificateReferences.append(SigningCertificateReference(
                        isV2: isV2,
                        digestAlgorithmURI: digest?.child("DigestMethod", namespace: ds)?.attribute("Algorithm", namespace: nil) ?? "",
                        digestValue: Self.base64(digest?.child("DigestValue", namespace: ds)),
                        issuerName: issuerSerial?.child("X509IssuerName", namespace: ds)?.text,
                        serialNumber: issuerSerial?.child("X509SerialNumber", namespace: ds)?.text
                            .trimmingCharacters(in: .whitespacesAndNewlines),
                        issuerSerialV2: cert.child("IssuerSerialV2", namespace: xades).map { Self.base64($0) }))
                }
            }
        }
        signingCertificateReferences = certificateReferences
        let policyHolder = ssp?.child("SignaturePolicyIdentifier", namespace: xades)
        let policy = policyHolder?.child("SignaturePolicyId", namespace: xades)
        hasExplicitAndImpliedPolicy = policy != nil && policyHolder?.child("SignaturePolicyImplied", namespace: xades) != nil
        policyIdentifier = policy?.child("SigPolicyId", namespace: xades)?.child("Identifier", namespace: xades)?.text
            .trimmingCharacters(in: .whitespacesAndNewlines)
        policySPURI = policy?.firstDescendant("SPURI", namespace: xades)?.text.trimmingCharacters(in: .whitespacesAndNewlines)
        var place: [String: String] = [:]
        for holder in ["SignatureProductionPlace", "SignatureProductionPlaceV2"] {
            for field in ssp?.child(holder, namespace: xades)?.children ?? [] { place[field.localName] = field.text }
        }
        productionPlace = place
        claimedRoles = ["SignerRole", "SignerRoleV2"].flatMap { role in
            (ssp?.child(role, namespace: xades)?.child("ClaimedRoles", namespace: xades)?.children("ClaimedRole", namespace: xades) ?? [])
                .map(\.text)
        }
        let sdop = signedProperties?.child("SignedDataObjectProperties", namespace: xades)
        hasSignedDataObjectProperties = sdop != nil
        var formats: [String: String] = [:]
        for format in sdop?.children("DataObjectFormat", namespace: xades) ?? [] {
            if let reference = format.attribute("ObjectReference", namespace: nil) {
                formats[reference] = format.child("MimeType", namespace: xades)?.text ?? ""
            }
        }
        dataObjectFormats = formats
        dataObjectTimeStamps = DataObjectTimeStamp.parse(sdop)

        let unsigned = qualifying.first?.child("UnsignedProperties", namespace: xades)
        if unsigned?.child("UnsignedDataObjectProperties", namespace: xades) != nil {
            problems.append("UnsignedDataObjectProperties is not supported")
        }
        let usp = unsigned?.child("UnsignedSignatureProperties", namespace: xades)
        // Without a CanonicalizationMethod, EN 319 132-1 (5.5.1, GenericTimeStampType) takes
        // Canonical XML 1.0 without comments, the XML-DSig default.
        signatureTimeStamps = (usp?.children("SignatureTimeStamp", namespace: xades) ?? []).map { stamp in
            let tokens = stamp.children("EncapsulatedTimeStamp", namespace: xades)
            return (stamp.child("CanonicalizationMethod", namespace: ds)?.attribute("Algorithm", namespace: nil)
                        ?? CanonicalizationMethod.c14n10.uri,
                    Self.base64(tokens.first), tokens.count)
        }
        certificateValues = (usp?.children("CertificateValues", namespace: xades) ?? [])
            .flatMap { $0.children("EncapsulatedX509Certificate", namespace: xades) }
            .compactMap { try? Certificate(der: Self.base64($0)) }
        let revocation = usp?.children("RevocationValues", namespace: xades) ?? []
        hasRevocationValues = !revocation.isEmpty
        ocspValues = revocation.flatMap { $0.children("OCSPValues", namespace: xades) }
            .flatMap { $0.children("EncapsulatedOCSPValue", namespace: xades) }.map { Self.base64($0) }
        unsignedSignatureProperties = usp
        keyInfo = element.child("KeyInfo", namespace: ds)
        archiveTimeStamps = (usp?.children ?? []).enumerated().compactMap { position, child in
            guard child.localName == "ArchiveTimeStamp", child.namespaceURI == Namespace.xades141 else { return nil }
            let tokens = child.children("EncapsulatedTimeStamp", namespace: xades)
            return ArchiveTimeStamp(position: position,
                                    canonicalizationURI: child.child("CanonicalizationMethod", namespace: ds)?.attribute("Algorithm", namespace: nil)
                                        ?? CanonicalizationMethod.c14n10.uri,
                                    token: Self.base64(tokens.first), tokenCount: tokens.count)
        }
        archiveTimeStampCount = archiveTimeStamps.count
        for unsupported in ["CounterSignature", "AttributeCertificateRefs", "AttributeRevocationRefs", "RefsOnlyTimeStamp",
                            "AttrAuthoritiesCertValues", "AttributeRevocationValues"]
        where usp?.child(unsupported, namespace: xades) != nil {
            problems.append("\(unsupported) is not supported")
        }
        if usp?.child("ArchiveTimeStamp", namespace: xades) != nil {
            problems.append("an ArchiveTimeStamp in the XAdES 1.3.2 namespace is not allowed")
        }
        structuralProblems = problems
    }

    /// Decodes a base64 text node, skipping whitespace and line breaks.
    static func base64(_ element: XMLElement?) -> [UInt8] {
        guard let element else { return [] }
        return Data(base64Encoded: element.text, options: .ignoreUnknownCharacters).map { [UInt8]($0) } ?? []
    }
}

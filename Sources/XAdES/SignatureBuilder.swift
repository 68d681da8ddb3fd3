import Crypto
import Foundation
import SafeXML

/// A data file as a signature covers it.
public struct SignedDataFile: Sendable {
    public let name: String
    public let mediaType: String
    public let sha256: [UInt8]

    public init(name: String, mediaType: String, sha256: [UInt8]) {
        self.name = name
        self.mediaType = mediaType
        self.sha256 = sha256
    }
}

/// Optional signer role and production place (asicfs `role=`, `city=`, …).
public struct SignerDetails: Sendable, Equatable {
    public var roles: [String] = []
    public var city: String? = nil
    public var stateOrProvince: String? = nil
    public var postalCode: String? = nil
    public var country: String? = nil
    public init() {}

    var hasPlace: Bool { [city, stateOrProvince, postalCode, country].contains { !($0 ?? "").isEmpty } }
}

/// Builds a new XAdES signature document the way current libdigidocpp writes it (asice-xades.md
/// §2.2, un-indented). The text is produced here and parsed back for canonicalization, so the
/// bytes that were digested are exactly the bytes written.
public struct SignatureBuilder: Sendable {
    public let id: String
    public let certificate: Certificate
    public let algorithm: SignatureAlgorithm
    public let files: [SignedDataFile]
    public let signingTime: Date
    public let details: SignerDetails
    public let canonicalization = CanonicalizationMethod.c14n11
    /// For tests that need signatures shaped the way other producers write them (validly
    /// signed all the same): changes to SignedInfo and SignedProperties made before anything is
    /// digested or signed. asicfs itself never sets them.
    var shapeSignedInfo: @Sendable (String) -> String = { $0 }
    var shapeSignedProperties: @Sendable (String) -> String = { $0 }

    public init(id: String, certificate: Certificate, algorithm: SignatureAlgorithm, files: [SignedDataFile],
                signingTime: Date = Date(), details: SignerDetails = SignerDetails()) {
        self.id = id
        self.certificate = certificate
        self.algorithm = algorithm
        self.files = files
        self.signingTime = signingTime
        self.details = details
    }

    /// The SignedInfo digest the signer signs (with the signature algorithm's hash).
    public func prepare() throws -> PreparedSignature {
        let signedProperties = shapeSignedProperties(signedPropertiesXML())
        let probe = try SafeXMLDocument.parse(Array(document(signedInfo: signedInfoXML(signedPropertiesDigest: []),
                                                             signatureValue: "", signedProperties: signedProperties,
                                                             unsigned: "").utf8), name: "new signature")
        guard let target = probe.root?.element(withId: "\(id)-SignedProperties") else {
            throw XAdESError("internal error: SignedProperties not found in the new signature")
        }
        let propertiesDigest = Digest.hash(try target.canonicalized(canonicalization), .sha256)
        let signedInfo = shapeSignedInfo(signedInfoXML(signedPropertiesDigest: propertiesDigest))
        let parsed = try SafeXMLDocument.parse(Array(document(signedInfo: signedInfo, signatureValue: "",
                                                              signedProperties: signedProperties, unsigned: "").utf8),
                                               name: "new signature")
        guard let signedInfoElement = parsed.root?.firstDescendant("SignedInfo", namespace: Namespace.ds) else {
            throw XAdESError("internal error: SignedInfo not found in the new signature")
        }
        let canonical = try signedInfoElement.canonicalized(canonicalization)
        return PreparedSignature(builder: self, signedInfo: signedInfo, signedProperties: signedProperties,
                                 digestToSign: Digest.hash(canonical, algorithm.digest))
    }

    func document(signedInfo: String, signatureValue: String, signedProperties: String, unsigned: String) -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            + "<asic:XAdESSignatures xmlns:asic=\"\(Namespace.asic)\" xmlns:ds=\"\(Namespace.ds)\" xmlns:xades=\"\(Namespace.xades)\">"
            + "<ds:Signature Id=\"\(id)\">" + signedInfo
            + "<ds:SignatureValue Id=\"\(id)-SIG\">\(signatureValue)</ds:SignatureValue>"
            + "<ds:KeyInfo><ds:X509Data><ds:X509Certificate>\(base64(certificate.der))</ds:X509Certificate></ds:X509Data></ds:KeyInfo>"
            + "<ds:Object><xades:QualifyingProperties Target=\"#\(id)\">" + signedProperties + unsigned
            + "</xades:QualifyingProperties></ds:Object></ds:Signature></asic:XAdESSignatures>"
    }

    func signedInfoXML(signedPropertiesDigest: [UInt8]) -> String {
        var xml = "<ds:SignedInfo><ds:CanonicalizationMethod Algorithm=\"\(canonicalization.uri)\"></ds:CanonicalizationMethod>"
            + "<ds:SignatureMethod Algorithm=\"\(AlgorithmURI.uri(algorithm))\"></ds:SignatureMethod>"
        for (index, file) in files.enumerated() {
            xml += "<ds:Reference Id=\"\(id)-RefId\(index)\" URI=\"\(XMLText.escaped(ReferenceURI.encode(file.name), inAttribute: true))\">"
                + digestXML(file.sha256) + "</ds:Reference>"
        }
        xml += "<ds:Reference Id=\"\(id)-RefId\(files.count)\" Type=\"\(Namespace.signedPropertiesType)\" URI=\"#\(id)-SignedProperties\">"
            + "<ds:Transforms><ds:Transform Algorithm=\"\(canonicalization.uri)\"></ds:Transform></ds:Transforms>"
            + digestXML(signedPropertiesDigest) + "</ds:Reference></ds:SignedInfo>"
        return xml
    }

    func signedPropertiesXML() -> String {
        var xml = "<xades:SignedProperties Id=\"\(id)-SignedProperties\"><xades:SignedSignatureProperties>"
            + "<xades:SigningTime>\(ISOTime.string(signingTime))</xades:SigningTime>"
            + "<xades:SigningCertificate><xades:Cert><xades:CertDigest>" + digestXML(Digest.hash(certificate.der, .sha256))
            + "</xades:CertDigest><xades:IssuerSerial><ds:X509IssuerName>\(XMLText.escaped(certificate.issuerNameRFC2253))</ds:X509IssuerName>"
            + "<ds:X509SerialNumber>\(certificate.serialDecimal)</ds:X509SerialNumber></xades:IssuerSerial></xades:Cert>"
            + "</xades:SigningCertificate>"
        if details.hasPlace {
            xml += "<xades:SignatureProductionPlace>"
            for (name, value) in [("City", details.city), ("StateOrProvince", details.stateOrProvince),
                                  ("PostalCode", details.postalCode), ("CountryName", details.country)] {
                if let value, !value.isEmpty { xml += "<xades:\(name)>\(XMLText.escaped(value))</xades:\(name)>" }
            }
            xml += "</xades:SignatureProductionPlace>"
        }
        if !details.roles.isEmpty {
            xml += "<xades:SignerRole><xades:ClaimedRoles>"
                + details.roles.map { "<xades:ClaimedRole>\(XMLText.escaped($0))</xades:ClaimedRole>" }.joined()
                + "</xades:ClaimedRoles></xades:SignerRole>"
        }
        xml += "</xades:SignedSignatureProperties><xades:SignedDataObjectProperties>"
        for (index, file) in files.enumerated() {
            xml += "<xades:DataObjectFormat ObjectReference=\"#\(id)-RefId\(index)\"><xades:MimeType>\(XMLText.escaped(file.mediaType))</xades:MimeType></xades:DataObjectFormat>"
        }
        return xml + "</xades:SignedDataObjectProperties></xades:SignedProperties>"
    }

    func digestXML(_ digest: [UInt8]) -> String {
        "<ds:DigestMethod Algorithm=\"\(AlgorithmURI.uri(DigestAlgorithm.sha256))\"></ds:DigestMethod><ds:DigestValue>\(base64(digest))</ds:DigestValue>"
    }
}

/// A signature waiting for its value, then for its time-stamp and revocation data.
public struct PreparedSignature: Sendable {
    public let builder: SignatureBuilder
    let signedInfo: String
    let signedProperties: String
    /// What the signer must sign: H(C14N(SignedInfo)) with the signature algorithm's hash.
    public let digestToSign: [UInt8]

    /// Checks the value against the certificate before anything else uses it.
    public func verify(signatureValue: [UInt8]) -> Bool {
        builder.certificate.publicKey?.verify(signature: signatureValue, digest: digestToSign, algorithm: builder.algorithm) ?? false
    }

    /// The canonical SignatureValue element, whose hash the time-stamp covers.
    public func canonicalSignatureValue(_ signatureValue: [UInt8]) throws -> [UInt8] {
        let parsed = try SafeXMLDocument.parse(Array(builder.document(
            signedInfo: signedInfo, signatureValue: base64(signatureValue), signedProperties: signedProperties,
            unsigned: "").utf8), name: "new signature")
        guard let element = parsed.root?.firstDescendant("SignatureValue", namespace: Namespace.ds) else {
            throw XAdESError("internal error: SignatureValue not found in the new signature")
        }
        return try element.canonicalized(builder.canonicalization)
    }

    /// The finished document: B profile without `timeStamp`, LT with it and the revocation data.
    public func document(signatureValue: [UInt8], timeStamp: [UInt8]? = nil, certificates: [Certificate] = [],
                         ocspResponses: [[UInt8]] = []) -> [UInt8] {
        let id = builder.id
        var unsigned = ""
        if let timeStamp {
            unsigned = "<xades:UnsignedProperties><xades:UnsignedSignatureProperties>"
                + "<xades:SignatureTimeStamp Id=\"\(id)-T0\"><ds:CanonicalizationMethod Algorithm=\"\(builder.canonicalization.uri)\"></ds:CanonicalizationMethod>"
                + "<xades:EncapsulatedTimeStamp>\(base64(timeStamp))</xades:EncapsulatedTimeStamp></xades:SignatureTimeStamp>"
            if !certificates.isEmpty {
                unsigned += "<xades:CertificateValues>" + certificates.enumerated().map { index, certificate in
                    "<xades:EncapsulatedX509Certificate Id=\"\(id)-CA-CERT\(index == 0 ? "" : String(index))\">\(base64(certificate.der))</xades:EncapsulatedX509Certificate>"
                }.joined() + "</xades:CertificateValues>"
            }
            if !ocspResponses.isEmpty {
                unsigned += "<xades:RevocationValues><xades:OCSPValues>" + ocspResponses.enumerated().map { index, response in
                    "<xades:EncapsulatedOCSPValue Id=\"N\(id.dropFirst())\(index == 0 ? "" : "-\(index)")\">\(base64(response))</xades:EncapsulatedOCSPValue>"
                }.joined() + "</xades:OCSPValues></xades:RevocationValues>"
            }
            unsigned += "</xades:UnsignedSignatureProperties></xades:UnsignedProperties>"
        }
        return Array(builder.document(signedInfo: signedInfo, signatureValue: base64(signatureValue),
                                      signedProperties: signedProperties, unsigned: unsigned).utf8)
    }
}

func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }


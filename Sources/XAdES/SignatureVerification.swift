import Crypto
import Foundation
import SafeXML

/// The XML-DSig core checks of one signature that need nothing but the document itself and the
/// signer certificate: SignedProperties digest, SignatureValue, signing-certificate reference.
/// Data-file digests need the container and are checked by the validator.
extension XAdESSignature {
    public func canonicalSignedInfo() throws -> [UInt8] {
        guard let signedInfo else { throw XAdESError("SignedInfo is missing") }
        guard let method = canonicalization else {
            throw XAdESError("unsupported canonicalization method \(canonicalizationURI)")
        }
        return try signedInfo.canonicalized(method)
    }

    /// nil when the SignatureValue verifies over C14N(SignedInfo) with the signer certificate's key,
    /// else why not.
    public func signatureValueProblem() -> String? {
        guard let algorithm = signatureAlgorithm else { return "unsupported signature method \(signatureMethodURI)" }
        guard let key = signingCertificate?.publicKey else { return "the signer certificate has no usable public key" }
        guard let canonical = try? canonicalSignedInfo() else { return "SignedInfo cannot be canonicalized" }
        if algorithm.scheme == .ecdsa, let length = key.ecdsaRawSignatureLength, signatureValue.count != length {
            return "the ECDSA signature value is \(signatureValue.count) bytes, not the \(length) of r||s that XML-DSig prescribes"
                + (signatureValue.first == 0x30 ? " (it is DER-encoded)" : "")
        }
        return key.verify(signature: signatureValue, data: canonical, algorithm: algorithm)
            ? nil : "the signature value does not verify with the signer's certificate (Failed to validate signature)"
    }

    /// nil when exactly one SignedProperties reference exists and its digest matches, else why not.
    public func signedPropertiesProblem() -> String? {
        let candidates = references.filter(\.isSignedProperties)
        guard candidates.count == 1, let reference = candidates.first else { return "SignedProperties not found" }
        guard reference.uri.hasPrefix("#"),
              let target = element.element(withId: String(reference.uri.dropFirst())),
              target.localName == "SignedProperties", target.namespaceURI == Namespace.xades else {
            return "SignedProperties not found"
        }
        // Without a Transform, XML-DSig canonicalizes a same-document reference with C14N 1.0.
        var method = CanonicalizationMethod.c14n10
        for uri in reference.transformURIs {
            guard let named = CanonicalizationMethod(uri: uri) else { return "unsupported transform \(uri)" }
            method = named
        }
        guard let algorithm = AlgorithmURI.digest(reference.digestAlgorithmURI) else {
            return "unsupported digest method \(reference.digestAlgorithmURI)"
        }
        guard let canonical = try? target.canonicalized(method) else { return "SignedProperties cannot be canonicalized" }
        return Digest.hash(canonical, algorithm) == reference.digestValue
            ? nil : "the digest of SignedProperties does not match (Failed to validate Reference '\(reference.uri)')"
    }

    /// nil when SigningCertificate(V2) names the KeyInfo certificate, else why not.
    public func signingCertificateReferenceProblem() -> String? {
        guard let certificate = signingCertificate else { return "KeyInfo holds no signer certificate" }
        guard signingCertificateReferences.count == 1, let reference = signingCertificateReferences.first else {
            return signingCertificateReferences.isEmpty ? "SigningCertificate is missing"
                : "SigningCertificate must name exactly one certificate"
        }
        guard let algorithm = AlgorithmURI.digest(reference.digestAlgorithmURI) else {
            return "unsupported digest method \(reference.digestAlgorithmURI) in SigningCertificate"
        }
        if Digest.hash(certificate.der, algorithm) != reference.digestValue {
            return "Signing certificate digest does not match"
        }
        if let serial = reference.serialNumber, serial != certificate.serialDecimal {
            return "Signing certificate issuer information does not match (serial number)"
        }
        if let issuer = reference.issuerName, !DistinguishedName.matches(issuer, certificate.issuerAttributes) {
            return "Signing certificate issuer information does not match (issuer name)"
        }
        if !reference.isV2 && (reference.issuerName == nil || reference.serialNumber == nil) {
            return "Signing certificate issuer information is missing"
        }
        return nil
    }

    /// The bytes a SignatureTimeStamp's message imprint covers: C14N of the SignatureValue element.
    public func canonicalSignatureValue(_ methodURI: String) throws -> [UInt8] {
        guard let element = signatureValueElement else { throw XAdESError("SignatureValue is missing") }
        guard let method = CanonicalizationMethod(uri: methodURI) else {
            throw XAdESError("unsupported canonicalization method \(methodURI)")
        }
        return try element.canonicalized(method)
    }
}

/// Lenient comparison of an X509IssuerName string with a certificate's issuer, as libdigidocpp
/// does it: escapes undone, attribute order ignored, only naming attributes compared.
public enum DistinguishedName {
    static let compared: [String: String] = [
        "CN": "CN", "COMMONNAME": "CN", "L": "L", "LOCALITYNAME": "L", "ST": "ST", "STATEORPROVINCENAME": "ST",
        "O": "O", "ORGANIZATIONNAME": "O", "OU": "OU", "ORGANIZATIONALUNITNAME": "OU", "C": "C", "COUNTRYNAME": "C",
        "STREET": "STREET", "STREETADDRESS": "STREET", "DC": "DC", "DOMAINCOMPONENT": "DC", "UID": "UID", "USERID": "UID",
    ]

    /// (attribute, value) pairs of an RFC 2253 string.
    public static func parse(_ text: String) -> [(String, String)]? {
        let bytes = Array(text.utf8)
        var pairs: [(String, String)] = []
        var key: [UInt8] = [], value: [UInt8] = []
        var inValue = false
        var i = 0
        func flush() {
            let k = String(decoding: key, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            pairs.append((k, String(decoding: value, as: UTF8.self)))
            key = []; value = []; inValue = false
        }
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\\"), i + 1 < bytes.count {
                if i + 2 < bytes.count, let high = hexDigitValue(bytes[i + 1]), let low = hexDigitValue(bytes[i + 2]) {
                    (inValue ? { value.append(high << 4 | low) } : { key.append(high << 4 | low) })()
                    i += 3
                } else {
                    (inValue ? { value.append(bytes[i + 1]) } : { key.append(bytes[i + 1]) })()
                    i += 2
                }
                continue
            }
            if byte == UInt8(ascii: "=") && !inValue { inValue = true }
            else if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "+") { guard inValue else { return nil }; flush() }
            else if inValue { value.append(byte) } else { key.append(byte) }
            i += 1
        }
        if inValue { flush() } else if !key.isEmpty { return nil }
        return pairs
    }

    public static func matches(_ text: String, _ attributes: [(String, String)]) -> Bool {
        guard let parsed = parse(text) else { return false }
        func normalized(_ pairs: [(String, String)]) -> [String] {
            pairs.compactMap { key, value in compared[key.uppercased()].map { $0 + "=" + value } }.sorted()
        }
        return normalized(parsed) == normalized(attributes)
    }
}

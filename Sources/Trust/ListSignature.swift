import Crypto
import Foundation
import SafeXML
import XAdES

/// The enveloped XML-DSig signature of a trusted list: every reference digest (the list itself
/// with the signature cut out, and the XAdES SignedProperties), then the signature value over
/// the canonical SignedInfo with the KeyInfo certificate, which must be one of `allowedSigners`
/// (a configured certificate, or one whose SHA-256 fingerprint is allowed).
enum ListSignature {
    static let ds = "http://www.w3.org/2000/09/xmldsig#"
    static let envelopedTransform = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"

    /// Returns the certificate that signed the list; throws a sentence saying what is wrong.
    static func verify(root: XMLElement, allowedSigners: ListSigners) throws(TrustedListError) -> Certificate {
        guard let signature = root.child("Signature", namespace: ds) else { throw TrustedListError("it is not signed") }
        guard let signedInfo = signature.child("SignedInfo", namespace: ds) else {
            throw TrustedListError("its signature has no SignedInfo")
        }
        let methodURI = signedInfo.child("CanonicalizationMethod", namespace: ds)?.attribute("Algorithm", namespace: nil) ?? ""
        guard let canonicalization = CanonicalizationMethod(uri: methodURI) else {
            throw TrustedListError("its signature uses an unknown canonicalization method \(methodURI)")
        }
        let algorithmURI = signedInfo.child("SignatureMethod", namespace: ds)?.attribute("Algorithm", namespace: nil) ?? ""
        guard let algorithm = AlgorithmURI.signature(algorithmURI) else {
            throw TrustedListError("its signature uses an unsupported signature method \(algorithmURI)")
        }

        var coversList = false
        for reference in signedInfo.children("Reference", namespace: ds) {
            if try verifyDigest(of: reference, root: root, signature: signature) { coversList = true }
        }
        // A signature over the SignedProperties alone would leave the services unprotected.
        guard coversList else { throw TrustedListError("its signature does not cover the whole list") }

        let signer = try signingCertificate(signature, allowedSigners: allowedSigners)
        guard let value = signature.child("SignatureValue", namespace: ds).flatMap({ base64($0.text) }),
              let key = signer.publicKey else { throw TrustedListError("its signature has no readable SignatureValue") }
        let signedBytes: [UInt8]
        do { signedBytes = try signedInfo.canonicalized(canonicalization) } catch {
            throw TrustedListError("its SignedInfo cannot be canonicalized: \(error)")
        }
        guard key.verify(signature: value, data: signedBytes, algorithm: algorithm) else {
            throw TrustedListError("its signature value does not verify with the certificate of \(signer.displayName)")
        }
        return signer
    }

    /// Checks one Reference; returns true when it is the enveloped reference to the whole list.
    private static func verifyDigest(of reference: XMLElement, root: XMLElement,
                                     signature: XMLElement) throws(TrustedListError) -> Bool {
        let uri = reference.attribute("URI", namespace: nil) ?? ""
        let target: XMLElement
        if uri.isEmpty {
            target = root
        } else if uri.hasPrefix("#"), let found = root.element(withId: String(uri.dropFirst())) {
            target = found
        } else {
            throw TrustedListError("its signature references '\(uri)', which is not an element of the list")
        }
        // Same-document references drop comments whatever the canonicalization says (XML-DSig 4.4.3.3).
        var method = CanonicalizationMethod.c14n10
        var prefixes: [String] = []
        var enveloped = false
        for transform in reference.child("Transforms", namespace: ds)?.children("Transform", namespace: ds) ?? [] {
            let algorithm = transform.attribute("Algorithm", namespace: nil) ?? ""
            if algorithm == envelopedTransform {
                enveloped = true
            } else if let chosen = CanonicalizationMethod(uri: algorithm) {
                method = CanonicalizationMethod(uri: chosen.uri.replacingOccurrences(of: "#WithComments", with: "")) ?? chosen
                prefixes = transform.children.first { $0.localName == "InclusiveNamespaces" }?
                    .attribute("PrefixList", namespace: nil)?.split(separator: " ").map(String.init) ?? []
            } else {
                throw TrustedListError("its signature uses an unsupported transform \(algorithm)")
            }
        }
        let digestURI = reference.child("DigestMethod", namespace: ds)?.attribute("Algorithm", namespace: nil) ?? ""
        guard let digestAlgorithm = AlgorithmURI.digest(digestURI) else {
            throw TrustedListError("its signature uses an unsupported digest method \(digestURI)")
        }
        guard let expected = reference.child("DigestValue", namespace: ds).flatMap({ base64($0.text) }) else {
            throw TrustedListError("its signature reference '\(uri)' has no readable DigestValue")
        }
        let bytes: [UInt8]
        do { bytes = try target.canonicalized(method, excluding: enveloped ? signature : nil, inclusivePrefixes: prefixes) } catch {
            throw TrustedListError("the part '\(uri)' cannot be canonicalized: \(error)")
        }
        guard Digest.hash(bytes, digestAlgorithm) == expected else {
            let part = target == root ? "the list" : "the signed part '\(uri)'"
            throw TrustedListError("its signature does not match its content: \(part) was changed after signing")
        }
        return target == root && enveloped
    }

    /// The KeyInfo certificate when it is an allowed signer. Without KeyInfo a single allowed
    /// certificate is assumed (the value check then decides); a fingerprint needs the certificate.
    private static func signingCertificate(_ signature: XMLElement,
                                           allowedSigners: ListSigners) throws(TrustedListError) -> Certificate {
        guard !allowedSigners.isEmpty else { throw TrustedListError("no certificate is configured as its allowed signer") }
        let text = signature.child("KeyInfo", namespace: ds)?.child("X509Data", namespace: ds)?
            .child("X509Certificate", namespace: ds)?.text
        guard let text else {
            guard let only = allowedSigners.onlyCertificate else {
                throw TrustedListError("its signature does not carry the certificate that made it")
            }
            return only
        }
        guard let der = base64(text), let certificate = try? Certificate(der: der) else {
            throw TrustedListError("its signing certificate cannot be read")
        }
        guard allowedSigners.allows(certificate) else {
            // Where signers are known by fingerprint, the signer's own says which one it is not.
            let fingerprint = allowedSigners.fingerprints.isEmpty ? ""
                : " (SHA-256 \(CertificateFingerprint(hex: Digest.hash(der, .sha256).hexString)?.hex ?? "?"))"
            throw TrustedListError("it is signed by \(certificate.displayName)\(fingerprint), which is not an allowed signer"
                + " (allowed: \(allowedSigners.names))")
        }
        return certificate
    }

    static func base64(_ text: String) -> [UInt8]? {
        Data(base64Encoded: text, options: .ignoreUnknownCharacters).map { Array($0) }
    }
}

extension Certificate {
    /// The common name, else the whole subject: how messages name a certificate.
    var displayName: String { commonName ?? subjectLine }
}

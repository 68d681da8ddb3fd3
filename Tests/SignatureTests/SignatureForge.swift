import ASiC
import Crypto
import Foundation
import SafeXML
import Signing
import TestTools
@testable import XAdES

/// Signatures shaped the way other producers write them — validly signed by the test PKI's
/// signer, time-stamped and OCSP-checked by the loopback services — for validation cases that
/// asicfs never writes itself. Each shaping step changes the XML text before what depends on it
/// is digested, signed or time-stamped, so the only thing wrong is the shape under test.
struct SignatureForge {
    let environment: SignatureEnvironment
    let tsaURL: String
    let p12: String
    var passphrase = TestPKI.passphrase

    /// What the unsigned properties are made of, for a shaping of them.
    struct UnsignedParts {
        let id: String
        let canonicalizationURI: String
        let timeStamp: [UInt8]
        let issuer: Certificate
        let ocsp: [UInt8]

        /// The unsigned properties as asicfs writes them, with each part replaceable.
        func xml(signatureTimeStamp: String? = nil, ocspValue: [UInt8]? = nil) -> String {
            let stamp = signatureTimeStamp ?? (timeStamp.isEmpty ? "" : "<xades:SignatureTimeStamp Id=\"\(id)-T0\"><ds:CanonicalizationMethod Algorithm=\"\(canonicalizationURI)\"></ds:CanonicalizationMethod>"
                + "<xades:EncapsulatedTimeStamp>\(base64(timeStamp))</xades:EncapsulatedTimeStamp></xades:SignatureTimeStamp>")
            return "<xades:UnsignedProperties><xades:UnsignedSignatureProperties>" + stamp
                + "<xades:CertificateValues><xades:EncapsulatedX509Certificate Id=\"\(id)-CA-CERT\">\(base64(issuer.der))</xades:EncapsulatedX509Certificate></xades:CertificateValues>"
                + "<xades:RevocationValues><xades:OCSPValues><xades:EncapsulatedOCSPValue Id=\"N\(id.dropFirst())\">\(base64(ocspValue ?? ocsp))</xades:EncapsulatedOCSPValue></xades:OCSPValues></xades:RevocationValues>"
                + "</xades:UnsignedSignatureProperties></xades:UnsignedProperties>"
        }
    }

    struct Shaping {
        var signedInfo: @Sendable (String) -> String = { $0 }
        var signedProperties: @Sendable (String) -> String = { $0 }
        /// The SignatureValue as written (from the raw value the signer made).
        var signatureValue: ([UInt8]) -> [UInt8] = { $0 }
        /// The canonicalization the time-stamp's imprint is computed with (nil: SignedInfo's).
        var timeStampCanonicalization: CanonicalizationMethod?
        var unsigned: (UnsignedParts) -> String = { $0.xml() }
        /// A BDOC time-mark instead of a time-stamp: no SignatureTimeStamp, and the OCSP request's
        /// nonce is the DigestInfo of the SignatureValue's SHA-256 (`unsigned` then gets an
        /// empty `timeStamp`).
        var timeMark: TimeMarkNonce?
        /// The OCSP responder to ask (nil: the one the signer's certificate names).
        var ocspURL: String?
    }

    enum TimeMarkNonce {
        /// DigestInfo with the algorithm's NULL parameter, as libdigidocpp writes it.
        case withNullParameter
        /// DigestInfo whose AlgorithmIdentifier leaves the parameter out (also valid DER).
        case withoutParameter

        func digestInfo(of signatureValue: [UInt8]) -> [UInt8] {
            let hash = Digest.hash(signatureValue, .sha256)
            let oid: [UInt8] = [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01]
            let algorithm = self == .withNullParameter ? [0x30, 0x0d] + oid + [0x05, 0x00] : [0x30, 0x0b] + oid
            let body = algorithm + [0x04, 0x20] + hash
            return [0x30, UInt8(body.count)] + body
        }
    }

    /// The BDOC 2.1 signature policy element, with its parts replaceable.
    static func policy(identifier: String = "urn:oid:1.3.6.1.4.1.10015.1000.3.2.1",
                       spuri: String? = "https://www.sk.ee/repository/bdoc-spec21.pdf") -> String {
        "<xades:SignaturePolicyIdentifier><xades:SignaturePolicyId><xades:SigPolicyId>"
            + "<xades:Identifier Qualifier=\"OIDAsURN\">\(identifier)</xades:Identifier></xades:SigPolicyId>"
            + "<xades:SigPolicyHash><ds:DigestMethod Algorithm=\"http://www.w3.org/2001/04/xmlenc#sha256\"></ds:DigestMethod>"
            + "<ds:DigestValue>7pudpH4eXlguSZY2e/pNbKzGsq+fu//woYL1SZFws1A=</ds:DigestValue></xades:SigPolicyHash>"
            + (spuri.map { "<xades:SigPolicyQualifiers><xades:SigPolicyQualifier><xades:SPURI>\($0)</xades:SPURI></xades:SigPolicyQualifier></xades:SigPolicyQualifiers>" } ?? "")
            + "</xades:SignaturePolicyId></xades:SignaturePolicyIdentifier>"
    }

    /// SignedProperties with `policy` put where XAdES has it: after SigningCertificate.
    static func inserting(_ policy: String) -> @Sendable (String) -> String {
        { $0.replacingOccurrences(of: "</xades:SigningCertificate>", with: "</xades:SigningCertificate>" + policy) }
    }

    /// Adds a signature shaped by `shaping` to `container` and returns the saved container.
    func sign(_ container: Container, _ shaping: Shaping = Shaping()) throws -> Container {
        let signer = try PKCS12Signer(file: p12, passphrase: SecretBytes(Array(passphrase.utf8)))
        let certificate = try signer.certificate { _ in }
        let files = try container.dataFiles.map {
            SignedDataFile(name: $0.name, mediaType: $0.mediaType, sha256: try container.sha256(of: $0.name))
        }
        let algorithm = signer.algorithm(for: certificate)
        var builder = SignatureBuilder(id: "S\(container.signatureFiles.count)", certificate: certificate, algorithm: algorithm, files: files)
        builder.shapeSignedInfo = shaping.signedInfo
        builder.shapeSignedProperties = shaping.signedProperties
        let prepared = try builder.prepare()
        let value = shaping.signatureValue(try signer.sign(digest: prepared.digestToSign, algorithm: algorithm) { _ in })

        let method = shaping.timeStampCanonicalization ?? builder.canonicalization
        let document = try SafeXMLDocument.parse(Array(builder.document(
            signedInfo: prepared.signedInfo, signatureValue: base64(value), signedProperties: prepared.signedProperties,
            unsigned: "").utf8), name: "forged")
        guard let valueElement = document.root?.firstDescendant("SignatureValue", namespace: Namespace.ds) else {
            throw ForgeError("no SignatureValue")
        }
        let http = try environment.httpClient()
        var timeStamp: [UInt8] = []
        if shaping.timeMark == nil {
            timeStamp = try TimeStampClient(url: tsaURL, post: http.post)
                .stamp(digest: Digest.hash(try valueElement.canonicalized(method), .sha256), algorithm: .sha256).der
        }
        guard let issuer = (signer.extraCertificates + environment.knownCertificates()).first(where: { certificate.isIssued(by: $0) }),
              let ocspURL = shaping.ocspURL ?? certificate.ocspURLs.first else { throw ForgeError("no issuer or OCSP URL for the signer") }
        let nonce = shaping.timeMark.map { OCSPRequest.Nonce.raw($0.digestInfo(of: value)) } ?? .random
        let ocsp = try OCSPClient(url: ocspURL, post: http.post).fetch(certificate: certificate, issuer: issuer, nonce: nonce)
        let parts = UnsignedParts(id: builder.id, canonicalizationURI: method.uri, timeStamp: timeStamp, issuer: issuer, ocsp: ocsp.der)
        let xml = builder.document(signedInfo: prepared.signedInfo, signatureValue: base64(value),
                                   signedProperties: prepared.signedProperties, unsigned: shaping.unsigned(parts))
        return try container.savingSignatures(adding: [(container.nextSignatureFileName, Array(xml.utf8))])
    }

    struct ForgeError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

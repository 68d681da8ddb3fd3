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
            let stamp = signatureTimeStamp ?? "<xades:SignatureTimeStamp Id=\"\(id)-T0\"><ds:CanonicalizationMethod Algorithm=\"\(canonicalizationURI)\"></ds:CanonicalizationMethod>"
                + "<xades:EncapsulatedTimeStamp>\(base64(timeStamp))</xades:EncapsulatedTimeStamp></xades:SignatureTimeStamp>"
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
        let token = try TimeStampClient(url: tsaURL, post: http.post)
            .stamp(digest: Digest.hash(try valueElement.canonicalized(method), .sha256), algorithm: .sha256)
        guard let issuer = (signer.extraCertificates + environment.knownCertificates()).first(where: { certificate.isIssued(by: $0) }),
              let ocspURL = certificate.ocspURLs.first else { throw ForgeError("no issuer or OCSP URL for the signer") }
        let ocsp = try OCSPClient(url: ocspURL, post: http.post).fetch(certificate: certificate, issuer: issuer)
        let parts = UnsignedParts(id: builder.id, canonicalizationURI: method.uri, timeStamp: token.der, issuer: issuer, ocsp: ocsp.der)
        let xml = builder.document(signedInfo: prepared.signedInfo, signatureValue: base64(value),
                                   signedProperties: prepared.signedProperties, unsigned: shaping.unsigned(parts))
        return try container.savingSignatures(adding: [(container.nextSignatureFileName, Array(xml.utf8))])
    }

    struct ForgeError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

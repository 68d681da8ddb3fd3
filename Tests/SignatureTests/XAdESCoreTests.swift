import ASiC
import Crypto
import Foundation
import SafeXML
import TestTools
import XAdES
import XCTest

/// The XML-DSig core of an LT signature made by the dated test PKI and the loopback services
/// (`SignatureForge`), checked by hand and by xmlsec1 as the independent verifier.
final class XAdESCoreTests: DatedServicesTestCase {
    override class var label: String { "xades-core" }

    let document = Array("the signed document\n".utf8)

    func signatures(_ container: Container) throws -> [XAdESSignature] {
        try container.signatureFiles.flatMap {
            try XAdESSignature.parse(file: $0.name, bytes: try container.signatureBytes($0))
        }
    }

    /// A folder for files the peers read, removed when the test ends.
    func scratch() throws -> String {
        let path = try dated.folder + "/x-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    func testAnLTSignatureVerifiesByHandAndWithXmlsec1() throws {
        let container = try sign(try newContainer([("test.txt", document)]))
        let all = try signatures(container)
        XCTAssertEqual(all.count, 1)
        let signature = try XCTUnwrap(all.first)
        XCTAssertEqual(signature.structuralProblems, [])
        XCTAssertEqual(signature.profile, "BES/time-stamp")
        XCTAssertEqual(signature.dataReferences.map(\.dataFileName), ["test.txt"])
        let folder = try scratch()
        try Data(document).write(to: URL(fileURLWithPath: folder + "/test.txt"))
        let digest = try Shell.sh("openssl dgst -sha256 -binary '\(folder)/test.txt' | base64")
        XCTAssertEqual(Data(signature.dataReferences[0].digestValue).base64EncodedString(),
                       digest.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        XCTAssertNil(signature.signedPropertiesProblem())
        XCTAssertNil(signature.signatureValueProblem())
        XCTAssertNil(signature.signingCertificateReferenceProblem())
        XCTAssertEqual(signature.signingCertificate?.commonName, "JÕEORG,JAAK-KRISTJAN,38001085718")
        // The time-stamp's imprint is the digest of the canonical SignatureValue element.
        let stamp = try XCTUnwrap(signature.signatureTimeStamps.first)
        let token = try TimeStampToken(der: stamp.token)
        XCTAssertEqual(Digest.hash(try signature.canonicalSignatureValue(stamp.canonicalizationURI)), token.imprint)
        XCTAssertNotEqual(Digest.hash(try signature.canonicalSignedInfo()), token.imprint)

        // xmlsec1 checks the references and the value on its own, the signature file beside the data file.
        let file = try XCTUnwrap(container.signatureFiles.first)
        try Data(try container.signatureBytes(file)).write(to: URL(fileURLWithPath: folder + "/signature.xml"))
        let pki = try dated.pki
        func xmlsec1() throws -> Shell.Output {
            try Shell.run("xmlsec1", ["--verify", "--id-attr:Id", "SignedProperties", "--enabled-reference-uris", "same-doc,remote",
                                      "--url-map:test.txt", folder + "/test.txt", "--trusted-pem", pki.root,
                                      "--untrusted-pem", pki.issuing, folder + "/signature.xml"])
        }
        let verified = try xmlsec1()
        XCTAssertEqual(verified.status, 0, verified.stderr)
        XCTAssertTrue(verified.stderr.contains("SignedInfo References (ok/all): 2/2"), verified.stderr)
        // And refuses it when the data file has changed.
        try Data(Array("the changed document\n".utf8)).write(to: URL(fileURLWithPath: folder + "/test.txt"))
        XCTAssertNotEqual(try xmlsec1().status, 0)
    }

    /// The reference's forged_lt.asice: a SignatureValue the named certificate's key did not make.
    func testTheForgedSignatureValueDoesNotVerify() throws {
        var shaping = SignatureForge.Shaping()
        shaping.signatureValue = { value in value.enumerated().map { $0.offset == value.count - 1 ? $0.element ^ 0x01 : $0.element } }
        let signature = try XCTUnwrap(try signatures(try sign(try newContainer([("test.txt", document)]), shaping)).first)
        XCTAssertNotNil(signature.signatureValueProblem())
        XCTAssertNil(signature.signedPropertiesProblem())
        XCTAssertEqual(signature.signingCertificate?.commonName, "JÕEORG,JAAK-KRISTJAN,38001085718")
    }

    func testReferenceURIVectors() {
        XCTAssertEqual(ReferenceURI.encode("0123456789~#%&()=`@{[]}'.txt"), "0123456789~%23%25%26%28%29%3D%60%40%7B%5B%5D%7D%27.txt")
        XCTAssertEqual(ReferenceURI.encode("öäüõ.txt"), "%C3%B6%C3%A4%C3%BC%C3%B5.txt")
        XCTAssertEqual(ReferenceURI.encode("my file+v2 (1).pdf"), "my%20file%2Bv2%20%281%29.pdf")
        XCTAssertEqual(ReferenceURI.encode("folder/test1.txt"), "folder/test1.txt")
        XCTAssertEqual(ReferenceURI.decode("%3dtest%20%40"), "=test @")
        XCTAssertEqual(ReferenceURI.decode("%3dtest%20%4"), "=test %4")
        XCTAssertEqual(ReferenceURI.decode("50%"), "50%")
        XCTAssertEqual(ReferenceURI.decode("data/õun.bin"), "data/õun.bin")
    }

    /// A self-signed certificate with this subject (openssl -subj form), made on the spot.
    func selfSigned(_ subject: String, in folder: String) throws -> Certificate {
        let name = folder + "/\(UUID().uuidString.prefix(8))"
        let made = try Shell.run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                             "-keyout", name + ".key", "-subj", subject, "-utf8", "-days", "30", "-out", name + ".pem"])
        XCTAssertEqual(made.status, 0, made.stderr)
        return try Certificate.parse(Array(try Data(contentsOf: URL(fileURLWithPath: name + ".pem"))))
    }

    func testIssuerNamesCompareAsLibdigidocppDoes() throws {
        let folder = try scratch()
        // An issuer name with an emailAddress attribute, as SK's test CAs had.
        let certificate = try selfSigned("/C=EE/O=AS Sertifitseerimiskeskus/CN=TEST of ESTEID-SK 2011/emailAddress=pki@sk.ee", in: folder)
        XCTAssertTrue(DistinguishedName.matches(certificate.issuerNameRFC2253, certificate.issuerAttributes))
        XCTAssertTrue(DistinguishedName.matches("emailAddress=pki@sk.ee,CN=TEST of ESTEID-SK 2011,O=AS Sertifitseerimiskeskus,C=EE",
                                                certificate.issuerAttributes))
        XCTAssertFalse(DistinguishedName.matches("emailAddress=pki@sk.ee,CN=TEST of ESTEID-SK 2015,O=AS Sertifitseerimiskeskus,C=EE",
                                                 certificate.issuerAttributes))
        XCTAssertFalse(DistinguishedName.matches("CN=TEST of ESTEID-SK 2011,O=AS Sertifitseerimiskeskus,C=EE,OU=extra",
                                                 certificate.issuerAttributes))
        let quoted = try selfSigned("/CN=\"test\"", in: folder)
        XCTAssertTrue(DistinguishedName.matches("CN=\\\"test\\\"", quoted.subjectAttributes))
        let comma = try selfSigned("/C=EE/CN=test, comma", in: folder)
        XCTAssertTrue(DistinguishedName.matches("CN=test\\, comma,C=EE", comma.subjectAttributes))
        let unicode = try selfSigned("/CN=unicodeöäüõ/C=EE", in: folder)
        XCTAssertTrue(DistinguishedName.matches("C=EE,CN=unicode\\C3\\B6\\C3\\A4\\C3\\BC\\C3\\B5", unicode.subjectAttributes))
        XCTAssertTrue(DistinguishedName.matches(unicode.issuerNameRFC2253, unicode.issuerAttributes))
    }

    /// A PKCS#12 file with a fresh self-signed identity (`key`: openssl genpkey's -algorithm and options).
    func pkcs12(_ name: String, passphrase: String, key: [String], in folder: String) throws -> [UInt8] {
        let base = folder + "/" + name
        let script = "set -e; openssl genpkey \(key.joined(separator: " ")) -out '\(base).key' 2>/dev/null; "
            + "openssl req -x509 -key '\(base).key' -subj '/CN=\(name)' -days 30 -out '\(base).pem'; "
            + "openssl pkcs12 -export -inkey '\(base).key' -in '\(base).pem' -passout fd:3 -out '\(base).p12' 3<<EOF\n\(passphrase)\nEOF"
        let made = try Shell.sh(script)
        XCTAssertEqual(made.status, 0, made.stderr)
        return Array(try Data(contentsOf: URL(fileURLWithPath: base + ".p12")))
    }

    func testPKCS12IdentitiesOpenAndSign() throws {
        let folder = try scratch()
        let rsaOptions = ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
        let identities = [("signer1.p12", "signer1", SignatureAlgorithm.Scheme.rsaPKCS1,
                           try pkcs12("signer1", passphrase: "signer1", key: rsaOptions, in: folder)),
                          ("signerEC.p12", "signerEC", .ecdsa,
                           try pkcs12("signerEC", passphrase: "signerEC", key: ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"],
                                      in: folder))]
        for (file, pass, scheme, bytes) in identities {
            let identity = try PKCS12Identity(bytes: bytes, passphrase: SecretBytes(Array(pass.utf8)), name: file)
            let key = try XCTUnwrap(identity.certificate.publicKey)
            let algorithm = key.preferredAlgorithm
            XCTAssertEqual(algorithm.scheme, scheme)
            let digest = Digest.hash(Array("hello".utf8), algorithm.digest)
            let signature = try identity.privateKey.sign(digest: digest, algorithm: algorithm)
            XCTAssertTrue(key.verify(signature: signature, digest: digest, algorithm: algorithm))
            XCTAssertFalse(key.verify(signature: signature, digest: Digest.hash(Array("other".utf8), algorithm.digest), algorithm: algorithm))
            if scheme == .ecdsa {
                XCTAssertEqual(algorithm.digest, .sha384)
                XCTAssertEqual(signature.count, 96, "raw r||s for P-384")
            }
            XCTAssertThrowsError(try PKCS12Identity(bytes: bytes, passphrase: SecretBytes(Array("wrong".utf8)), name: file)) {
                XCTAssertEqual("\($0)", "wrong passphrase for \(file)")
            }
        }
        // RSA-PSS (salt = hash length, MGF1 with the same hash), as PKCS#11 tokens sign.
        let rsa = try PKCS12Identity(bytes: identities[0].3,
                                     passphrase: SecretBytes(Array("signer1".utf8)), name: "signer1.p12")
        let pss = SignatureAlgorithm(.rsaPSS, .sha256)
        XCTAssertEqual(AlgorithmURI.uri(pss), "http://www.w3.org/2007/05/xmldsig-more#sha256-rsa-MGF1")
        XCTAssertEqual(AlgorithmURI.signature(AlgorithmURI.uri(pss)), pss)
        let digest = Digest.hash(Array("pss".utf8))
        let pssSignature = try rsa.privateKey.sign(digest: digest, algorithm: pss)
        let rsaKey = try XCTUnwrap(rsa.certificate.publicKey)
        XCTAssertTrue(rsaKey.verify(signature: pssSignature, digest: digest, algorithm: pss))
        XCTAssertFalse(rsaKey.verify(signature: pssSignature, digest: digest, algorithm: SignatureAlgorithm(.rsaPKCS1, .sha256)))
        XCTAssertThrowsError(try PKCS12Identity(bytes: Array("not a p12".utf8), passphrase: SecretBytes([]), name: "x.p12")) {
            XCTAssertEqual("\($0)", "x.p12 is not a PKCS#12 file")
        }
    }
}

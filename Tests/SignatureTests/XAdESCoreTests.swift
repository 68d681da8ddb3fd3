import ASiC
import Crypto
import Foundation
import SafeXML
import XAdES
import XCTest

/// The XML-DSig core of real signatures from the reference implementation (values re-computed
/// independently in asice-xades.md §5).
final class XAdESCoreTests: XCTestCase {
    static let corpus: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<2 { url.deleteLastPathComponent() }
        return url.path + "/Fixtures/libdigidocpp/"
    }()

    func signatures(_ name: String) throws -> (Container, [XAdESSignature]) {
        let container = try Container.open(Self.corpus + name)
        let all = try container.signatureFiles.flatMap {
            try XAdESSignature.parse(file: $0.name, bytes: try container.signatureBytes($0))
        }
        return (container, all)
    }

    func testTheTslContainerSignatureVerifiesByHand() throws {
        let (_, all) = try signatures("tsl.asice")
        XCTAssertEqual(all.count, 1)
        let signature = try XCTUnwrap(all.first)
        XCTAssertEqual(signature.structuralProblems, [])
        XCTAssertEqual(signature.profile, "BES/time-stamp")
        XCTAssertEqual(signature.dataReferences.map(\.dataFileName), ["test.txt"])
        XCTAssertEqual(Data(signature.dataReferences[0].digestValue).base64EncodedString(),
                       "GBIQ+PnHecJtodmyB1veAScwLuDj/KOMmoP1sd2OXTs=")
        XCTAssertEqual(Digest.hash(try signature.canonicalSignedInfo()).hexString,
                       "cff2246def6c7fb4b6f93ed982178258479c92dba2339915b9538e89b6809132")
        XCTAssertNil(signature.signedPropertiesProblem())
        XCTAssertNil(signature.signatureValueProblem())
        XCTAssertNil(signature.signingCertificateReferenceProblem())
        XCTAssertEqual(Digest.hash(try signature.canonicalSignatureValue(signature.signatureTimeStamps[0].canonicalizationURI)).hexString,
                       "2b2445555fa835abd00ec99e5eb45dafe47ac0ac76cc08541bfe35658d8f49fd")
    }

    func testTheForgedSignatureValueDoesNotVerify() throws {
        let (_, all) = try signatures("forged_lt.asice")
        let signature = try XCTUnwrap(all.first)
        XCTAssertNotNil(signature.signatureValueProblem())
        XCTAssertEqual(signature.signingCertificate?.commonName, "MÖLDER,HUGO MARTIN,38910239121")
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

    func testIssuerNamesCompareAsLibdigidocppDoes() throws {
        let certificate = try Certificate.parse(Array(try Data(contentsOf: URL(fileURLWithPath: Self.corpus + "47101010033.cer"))))
        XCTAssertTrue(DistinguishedName.matches(certificate.issuerNameRFC2253, certificate.issuerAttributes))
        XCTAssertTrue(DistinguishedName.matches("emailAddress=pki@sk.ee,CN=TEST of ESTEID-SK 2011,O=AS Sertifitseerimiskeskus,C=EE",
                                                certificate.issuerAttributes))
        XCTAssertFalse(DistinguishedName.matches("emailAddress=pki@sk.ee,CN=TEST of ESTEID-SK 2015,O=AS Sertifitseerimiskeskus,C=EE",
                                                 certificate.issuerAttributes))
        XCTAssertFalse(DistinguishedName.matches("CN=TEST of ESTEID-SK 2011,O=AS Sertifitseerimiskeskus,C=EE,OU=extra",
                                                 certificate.issuerAttributes))
        let quoted = try Certificate.parse(Array(try Data(contentsOf: URL(fileURLWithPath: Self.corpus + "test.crt"))))
        XCTAssertTrue(DistinguishedName.matches("CN=\\\"test\\\"", quoted.subjectAttributes))
        let comma = try Certificate.parse(Array(try Data(contentsOf: URL(fileURLWithPath: Self.corpus + "comma.crt"))))
        XCTAssertTrue(DistinguishedName.matches("CN=test\\, comma,C=EE", comma.subjectAttributes))
        let unicode = try Certificate.parse(Array(try Data(contentsOf: URL(fileURLWithPath: Self.corpus + "unicode.crt"))))
        XCTAssertTrue(DistinguishedName.matches("C=EE,CN=unicode\\C3\\B6\\C3\\A4\\C3\\BC\\C3\\B5", unicode.subjectAttributes))
        XCTAssertTrue(DistinguishedName.matches(unicode.issuerNameRFC2253, unicode.issuerAttributes))
    }

    func testPKCS12IdentitiesOpenAndSign() throws {
        for (file, pass, scheme) in [("signer1.p12", "signer1", SignatureAlgorithm.Scheme.rsaPKCS1), ("signerEC.p12", "signerEC", .ecdsa)] {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Self.corpus + file)))
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
        let rsa = try PKCS12Identity(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: Self.corpus + "signer1.p12"))),
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

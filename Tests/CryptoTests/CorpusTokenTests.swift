import Crypto
import Foundation
import TestTools
import XCTest

/// A real time-stamp token and OCSP response (SK's test services, 2016) from libdigidocpp's
/// tsl.asice, with the values the spec's worked example (§5.1) recomputed independently; the
/// signer's issuer comes from the corpus trusted list EE_T.xml.
final class CorpusTokenTests: XCTestCase {
    private struct Values {
        let timeStamp: [UInt8]
        let ocsp: [UInt8]
        let signer: Certificate
        let issuer: Certificate
    }

    private func values() throws -> Values {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<2 { url.deleteLastPathComponent() }
        let corpus = url.path + "/Fixtures/libdigidocpp/"
        let out = try Shell.python("""
            import re, sys, zipfile
            def values(xml, tag):  # with or without a namespace prefix
                return ["".join(v.split()) for v in re.findall(r"<(?:\\w+:)?" + tag + r"[^>]*>([^<]*)<", xml)]
            xml = zipfile.ZipFile(sys.argv[1] + "tsl.asice").read("META-INF/signatures0.xml").decode()
            for tag in ("EncapsulatedTimeStamp", "EncapsulatedOCSPValue", "X509Certificate"):
                for value in values(xml, tag):
                    print(tag, value)
            for value in values(open(sys.argv[1] + "EE_T.xml").read(), "X509Certificate"):
                print("TrustedList", value)
            """, [corpus])
        XCTAssertEqual(out.status, 0, out.stderr)
        var found: [String: [[UInt8]]] = [:]
        for line in out.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ")
            found[String(parts[0]), default: []].append([UInt8](try XCTUnwrap(Data(base64Encoded: String(parts[1])))))
        }
        return Values(timeStamp: try XCTUnwrap(found["EncapsulatedTimeStamp"]?.first),
                      ocsp: try XCTUnwrap(found["EncapsulatedOCSPValue"]?.first),
                      signer: try Certificate(der: try XCTUnwrap(found["X509Certificate"]?.first)),
                      issuer: try XCTUnwrap(try (found["TrustedList"] ?? []).map { try Certificate(der: $0) }
                        .first { $0.commonName == "TEST of ESTEID-SK 2011" }))
    }

    private func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    func testSKTimeStampTokenReadsAndVerifies() throws {
        let token = try TimeStampToken(der: try values().timeStamp)
        XCTAssertEqual(token.genTime, date("2016-11-28T13:46:43Z"))
        XCTAssertEqual(token.imprintAlgorithm, .sha256)
        XCTAssertEqual(token.imprint.hexString, "2b2445555fa835abd00ec99e5eb45dafe47ac0ac76cc08541bfe35658d8f49fd")
        let tsa = try token.verify(imprint: token.imprint)
        XCTAssertEqual(tsa.der, token.signerCertificate?.der)
        XCTAssertNotNil(tsa.commonName)
    }

    func testSKOCSPResponseReadsAndVerifies() throws {
        let values = try values()
        let response = try OCSPResponse(der: values.ocsp)
        XCTAssertEqual(response.status, .successful)
        XCTAssertEqual(response.producedAt, date("2016-11-28T13:46:43Z"))
        // The 2016 DigestInfo nonce: SHA-256 prefix, then SHA-256 of the decoded SignatureValue.
        XCTAssertEqual(response.nonce?.hexString, "3031300d060960864801650304020105000420"
                       + "681fe836e6f7da466c141ea119510b238051a68c747354e09655cf348a2bfcda")
        let responder = try XCTUnwrap(response.responderCertificate)
        XCTAssertTrue(response.verifySignature(with: responder))
        let single = try XCTUnwrap(response.singleResponse(for: values.signer, issuer: values.issuer))
        XCTAssertEqual(single.status, .good)
        XCTAssertEqual(single.certIDHash, .sha1)
        XCTAssertEqual(single.thisUpdate, date("2016-11-28T13:46:43Z"))
        XCTAssertNil(single.nextUpdate)
        XCTAssertNil(response.singleResponse(for: values.issuer, issuer: values.issuer))
    }
}

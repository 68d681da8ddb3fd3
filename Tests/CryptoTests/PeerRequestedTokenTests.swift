import Crypto
import Foundation
import TestTools
import XCTest

/// A time-stamp token and an OCSP response that other clients asked the loopback services for
/// (`openssl ts -query` and Python's cryptography, posted with curl), read and verified by asicfs:
/// the shapes a signature made elsewhere carries, with its values computed independently. The
/// OCSP request carries a BDOC time-mark nonce (a DigestInfo written as the extension value
/// itself), as SK's 2016 responses in libdigidocpp's corpus did.
final class PeerRequestedTokenTests: LoopbackPKITestCase {
    private func run(_ script: String) throws -> String {
        let out = try Shell.sh(script)
        XCTAssertEqual(out.status, 0, out.stderr)
        return out.stdout
    }

    func testATokenOpenSSLAskedForReadsAndVerifies() throws {
        let folder = loopback.folder.path
        let data = try loopback.write(Array("<ds:SignatureValue>peer</ds:SignatureValue>".utf8), "peer-data")
        let started = Date()
        _ = try run("""
            set -e; cd '\(folder)'
            openssl ts -query -data '\(data)' -sha256 -cert -out peer.tsq
            curl -sf -H 'Content-Type: application/timestamp-query' --data-binary @peer.tsq '\(loopback.services.tsaURL)' -o peer.tsr
            openssl ts -reply -in peer.tsr -token_out -out peer.tst
            """)
        let digest = try run("openssl dgst -sha256 -r '\(data)'").prefix(64)
        let token = try TimeStampToken(der: Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/peer.tst"))))
        XCTAssertEqual(token.imprintAlgorithm, .sha256)
        XCTAssertEqual(token.imprint.hexString, String(digest))
        XCTAssertLessThanOrEqual(abs(token.genTime.timeIntervalSince(started)), 60)
        XCTAssertEqual(token.policy, "1.2.3.4.1")
        let tsa = try token.verify(imprint: token.imprint)
        XCTAssertEqual(tsa.der, try loopback.certificate(loopback.pki.tsa).der)
        XCTAssertEqual(tsa.der, token.signerCertificate?.der)
        XCTAssertThrowsError(try token.verify(imprint: Digest.hash(Array("other".utf8), .sha256)))
    }

    func testAnOCSPResponseWithADigestInfoNonceReadsAndVerifies() throws {
        let folder = loopback.folder.path
        let pki = loopback.pki
        // The time-mark nonce: SHA-256's DigestInfo prefix, then the hash of a signature value.
        let digestInfo = "3031300d060960864801650304020105000420"
            + (try run("printf 'a signature value' | openssl dgst -sha256 -r").prefix(64))
        let started = Date()
        _ = try run("""
            set -e; cd '\(folder)'
            /usr/bin/python3 - '\(pki.signer)' '\(pki.issuing)' '\(digestInfo)' > peer.ocspreq <<'PY'
            import sys
            from cryptography import x509
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.x509 import ocsp
            load = lambda path: x509.load_pem_x509_certificate(open(path, "rb").read())
            nonce = x509.UnrecognizedExtension(x509.ObjectIdentifier("1.3.6.1.5.5.7.48.1.2"), bytes.fromhex(sys.argv[3]))
            request = ocsp.OCSPRequestBuilder().add_certificate(load(sys.argv[1]), load(sys.argv[2]), hashes.SHA1())
            sys.stdout.buffer.write(request.add_extension(nonce, critical=False).build().public_bytes(serialization.Encoding.DER))
            PY
            curl -sf -H 'Content-Type: application/ocsp-request' --data-binary @peer.ocspreq '\(loopback.services.ocspURL)' -o peer.ocsp
            """)
        let response = try OCSPResponse(der: Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/peer.ocsp"))))
        let signer = try loopback.certificate(pki.signer), issuer = try loopback.certificate(pki.issuing)
        XCTAssertEqual(response.status, .successful)
        XCTAssertLessThanOrEqual(abs(try XCTUnwrap(response.producedAt).timeIntervalSince(started)), 60)
        XCTAssertEqual(response.nonceExtensionValue?.hexString, digestInfo, "echoed as sent: the DigestInfo itself")
        XCTAssertEqual(response.nonce?.hexString, digestInfo)
        let responder = try XCTUnwrap(response.responderCertificate)
        XCTAssertEqual(responder.der, try loopback.certificate(pki.ocsp).der)
        XCTAssertTrue(response.verifySignature(with: responder))
        XCTAssertFalse(response.verifySignature(with: issuer))
        let single = try XCTUnwrap(response.singleResponse(for: signer, issuer: issuer))
        XCTAssertEqual(single.status, .good)
        XCTAssertEqual(single.certIDHash, .sha1)
        XCTAssertLessThanOrEqual(abs(single.thisUpdate.timeIntervalSince(started)), 60)
        XCTAssertNotNil(single.nextUpdate, "the responder says -ndays 1")
        XCTAssertNil(response.singleResponse(for: issuer, issuer: issuer), "asked only about the signer")
    }
}

import Crypto
import Foundation
import HTTP
import TestTools
import XCTest

/// RFC 3161 requests, replies and tokens against the loopback TSA (`openssl ts -reply`), with
/// `openssl ts -verify` as the independent peer.
final class TimeStampTests: LoopbackPKITestCase {
    private var client: TimeStampClient { TimeStampClient(url: loopback.services.tsaURL, post: loopback.http.post) }
    private let data = Array("<ds:SignatureValue>…</ds:SignatureValue>".utf8)

    func testStampedDigestVerifiesWithTheTSACertificate() throws {
        let digest = Digest.hash(data, .sha256)
        let token = try client.stamp(digest: digest)
        let tsa = try loopback.certificate(loopback.pki.tsa)
        XCTAssertLessThan(abs(token.genTime.timeIntervalSinceNow), 60, "genTime \(token.genTime) is now")
        XCTAssertEqual(token.imprintAlgorithm, .sha256)
        XCTAssertEqual(token.imprint, digest)
        XCTAssertEqual(token.nonce?.count, 20)
        XCTAssertFalse(token.serial.isEmpty)
        XCTAssertEqual(token.policy, "1.2.3.4.1")
        XCTAssertEqual(token.signerCertificate?.der, tsa.der)
        XCTAssertTrue(token.certificates.contains { $0.der == tsa.der })
        XCTAssertEqual(try token.verify(imprint: digest).der, tsa.der)
        XCTAssertEqual(try token.verify(data: data).der, tsa.der)
        XCTAssertEqual(try token.verify(imprint: digest, signer: tsa).der, tsa.der)
        // What XAdES stores reads back the same (SignatureSummary uses init(der:) and genTime).
        XCTAssertEqual(try TimeStampToken(der: token.der).genTime, token.genTime)
    }

    func testSHA384AndSHA512ImprintsAreStamped() throws {
        for algorithm in [DigestAlgorithm.sha384, .sha512] {
            let token = try client.stamp(digest: Digest.hash(data, algorithm), algorithm: algorithm)
            XCTAssertEqual(token.imprintAlgorithm, algorithm)
            XCTAssertNoThrow(try token.verify(data: data))
        }
    }

    func testOpenSSLVerifiesOurRequestAndTheReply() throws {
        let digest = Digest.hash(data, .sha256)
        let request = try TimeStampRequest.make(imprint: digest)
        XCTAssertEqual(request.nonce.count, 20)
        XCTAssertNotEqual(request.nonce[0], 0)
        let reply = try loopback.http.post(loopback.services.tsaURL, body: request.der,
                                           contentType: "application/timestamp-query",
                                           accept: "application/timestamp-reply", timeout: 10)
        XCTAssertEqual(reply.status, 200)
        let response = try TimeStampResponse(der: reply.body, request: request)
        XCTAssertEqual(response.status, .granted)

        let query = try loopback.write(request.der, "q.tsq")
        let text = try Shell.run("openssl", ["ts", "-query", "-in", query, "-text"]).stdout
        XCTAssertTrue(text.contains("Version: 1"), text)
        XCTAssertTrue(text.contains("Hash Algorithm: sha256"), text)
        XCTAssertTrue(text.contains("Policy OID: unspecified"), text)
        XCTAssertTrue(text.contains("Certificate required: yes"), text)
        XCTAssertTrue(text.contains("Nonce: 0x" + request.nonce.hexString.uppercased()), text)

        // The reply against our query (imprint and nonce), and our token alone against the digest.
        let pki = loopback.pki
        let replyFile = try loopback.write(reply.body, "r.tsr")
        let checked = try Shell.run("openssl", ["ts", "-verify", "-queryfile", query, "-in", replyFile,
                                                "-CAfile", pki.root, "-untrusted", pki.tsa])
        XCTAssertTrue(checked.stdout.contains("Verification: OK"), checked.stdout + checked.stderr)
        let tokenFile = try loopback.write(response.token.der, "token.der")
        let token = try Shell.run("openssl", ["ts", "-verify", "-token_in", "-in", tokenFile, "-digest", digest.hexString,
                                              "-CAfile", pki.root, "-untrusted", pki.tsa])
        XCTAssertTrue(token.stdout.contains("Verification: OK"), token.stdout + token.stderr)
    }

    func testAWrongImprintFailsVerification() throws {
        let token = try client.stamp(digest: Digest.hash(data, .sha256))
        XCTAssertThrowsError(try token.verify(imprint: Digest.hash(data + [0], .sha256))) {
            XCTAssertTrue("\($0)".contains("message imprint does not match"), "\($0)")
        }
        XCTAssertThrowsError(try token.verify(data: Array("other".utf8)))
    }

    func testATamperedTokenOrAnotherCertificateFailsTheSignature() throws {
        let token = try client.stamp(digest: Digest.hash(data, .sha256))
        var bytes = token.der
        bytes[bytes.count - 1] ^= 0x01  // the last byte is the end of the ECDSA signature value
        let tampered = try TimeStampToken(der: bytes)
        XCTAssertThrowsError(try tampered.verify(data: data)) {
            XCTAssertTrue("\($0)".contains("signature does not verify"), "\($0)")
        }
        let other = try loopback.certificate(loopback.pki.ocsp)
        XCTAssertThrowsError(try token.verify(data: data, signer: other))
    }

    /// A CMS token whose SignerInfo names the TSA by key identifier (version 3), which the
    /// PKCS#7 parser cannot read: re-signed from a real token's TSTInfo with `openssl cms`.
    func testACMSTokenWithAKeyIdentifierSignerIsRead() throws {
        let token = try client.stamp(digest: Digest.hash(data, .sha256))
        let pki = loopback.pki
        let original = try loopback.write(token.der, "original.der")
        let made = try Shell.sh("""
            set -e; cd '\(loopback.folder.path)'
            openssl cms -verify -noverify -binary -inform DER -in '\(original)' -out tstinfo.der 2>/dev/null
            openssl cms -sign -binary -nodetach -keyid -econtent_type 1.2.840.113549.1.9.16.1.4 -md sha256 \
              -in tstinfo.der -signer '\(pki.tsa)' -inkey '\(pki.path("tsa.key"))' -outform DER -out cms.der
            ! openssl pkcs7 -inform DER -in cms.der -noout 2>/dev/null
            """)
        XCTAssertEqual(made.status, 0, "made a token PKCS#7 cannot read: " + made.stderr)
        let cms = try TimeStampToken(der: Array(try XCTUnwrap(FileManager.default.contents(
            atPath: loopback.folder.path + "/cms.der"))))
        XCTAssertEqual(cms.genTime, token.genTime)
        XCTAssertEqual(cms.serial, token.serial)
        XCTAssertEqual(try cms.verify(data: data).der, try loopback.certificate(pki.tsa).der)
    }

    func testARefusalCarriesTheTSAsReason() throws {
        // SHA-1 is not among the TSA's digests; our own request builder refuses it, so ask openssl.
        let query = loopback.folder.path + "/sha1.tsq"
        let made = try Shell.run("openssl", ["ts", "-query", "-digest", String(repeating: "ab", count: 20), "-sha1",
                                             "-cert", "-out", query])
        XCTAssertEqual(made.status, 0, made.stderr)
        let body = Array(try XCTUnwrap(FileManager.default.contents(atPath: query)))
        let reply = try loopback.http.post(loopback.services.tsaURL, body: body, contentType: "application/timestamp-query",
                                           accept: "application/timestamp-reply", timeout: 10)
        XCTAssertThrowsError(try TimeStampResponse(der: reply.body)) {
            let text = "\($0)"
            XCTAssertTrue(text.hasPrefix("the time-stamp service did not grant the time-stamp: rejection"), text)
            XCTAssertTrue(text.contains("not supported"), text)
            XCTAssertTrue(text.contains("[badAlg]"), text)
        }
        XCTAssertThrowsError(try TimeStampRequest.make(imprint: Digest.hash(data, .sha1), algorithm: .sha1))
        XCTAssertThrowsError(try TimeStampRequest.make(imprint: [1, 2, 3], algorithm: .sha256))
    }

    func testAReplyToAnotherRequestIsRefused() throws {
        let digest = Digest.hash(data, .sha256)
        let first = try TimeStampRequest.make(imprint: digest)
        let reply = try loopback.http.post(loopback.services.tsaURL, body: first.der,
                                           contentType: "application/timestamp-query",
                                           accept: "application/timestamp-reply", timeout: 10)
        let second = try TimeStampRequest.make(imprint: digest)
        XCTAssertThrowsError(try TimeStampResponse(der: reply.body, request: second)) {
            XCTAssertTrue("\($0)".contains("does not echo our nonce"), "\($0)")
        }
        let otherData = try TimeStampRequest.make(imprint: Digest.hash(data + [1], .sha256))
        XCTAssertThrowsError(try TimeStampResponse(der: reply.body, request: otherData)) {
            XCTAssertTrue("\($0)".contains("message imprint differs"), "\($0)")
        }
    }

    func testHTTPRefusalsHaveTheirOwnSentences() throws {
        let folder = try TemporaryFolder("tsa-http")
        defer { folder.remove() }
        let server = try TestHTTPServer.start(in: folder.path)
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let digest = Digest.hash(data, .sha256)
        let expected = [
            "/status/403": "refused this client (HTTP 403 Forbidden)",
            "/status/429": "is limiting requests (HTTP 429 Too Many Requests)",
            "/status/500": "answered HTTP 500",
            "/text": "answered text/plain, not application/timestamp-reply",
        ]
        for (path, sentence) in expected {
            XCTAssertThrowsError(try TimeStampClient(url: base + path, post: loopback.http.post).stamp(digest: digest)) {
                XCTAssertTrue("\($0)".contains(sentence), path + ": \($0)")
            }
        }
        // Transport failures come through as the HTTP module's own errors.
        XCTAssertThrowsError(try TimeStampClient(url: "http://127.0.0.1:1/tsa", post: loopback.http.post)
            .stamp(digest: digest)) {
            guard case .cannotConnect = $0 as? HTTPError else { return XCTFail("\($0)") }
        }
    }
}

import Crypto
import Foundation
import HTTP
import TestTools
import XCTest

/// OCSP requests and responses against the loopback responders (`openssl ocsp`, EC and RSA),
/// with the openssl command line as the independent peer for what we send.
final class OCSPTests: LoopbackPKITestCase {
    private var signer: Certificate!
    private var revoked: Certificate!
    private var issuer: Certificate!

    override func setUpWithError() throws {
        try super.setUpWithError()
        signer = try certificate(loopback.pki.signer)
        revoked = try certificate(loopback.pki.revoked)
        issuer = try certificate(loopback.pki.issuing)
    }

    private func certificate(_ path: String) throws -> Certificate { try loopback.certificate(path) }

    private func client(_ url: String) -> OCSPClient { OCSPClient(url: url, post: loopback.http.post) }

    func testGoodAndRevokedFromBothResponders() throws {
        let responders = [(loopback.services.ocspURL, loopback.pki.ocsp, loopback.pki.ocspRSA),
                          (loopback.services.ocspRSAURL, loopback.pki.ocspRSA, loopback.pki.ocsp)]
        for (url, responderPath, otherPath) in responders {
            let responder = try certificate(responderPath)
            let other = try certificate(otherPath)

            let good = try client(url).fetch(certificate: signer, issuer: issuer)
            XCTAssertEqual(good.status, .successful)
            let single = try XCTUnwrap(good.singleResponse(for: signer, issuer: issuer), url)
            XCTAssertEqual(single.status, .good, url)
            XCTAssertEqual(single.certIDHash, .sha1)
            XCTAssertLessThan(abs(single.thisUpdate.timeIntervalSinceNow), 60)
            XCTAssertNotNil(single.nextUpdate)  // -ndays 1
            XCTAssertNoThrow(try single.checkValidity())
            XCTAssertLessThan(abs(try XCTUnwrap(good.producedAt).timeIntervalSinceNow), 60)
            XCTAssertTrue(good.certificates.contains { $0.der == responder.der }, url)
            XCTAssertEqual(good.responderCertificate?.der, responder.der, url)
            XCTAssertTrue(good.verifySignature(with: responder), url)
            XCTAssertFalse(good.verifySignature(with: other), url)
            XCTAssertNil(good.singleResponse(for: revoked, issuer: issuer), "asked only about the signer")

            let bad = try client(url).fetch(certificate: revoked, issuer: issuer)
            let revocation = try XCTUnwrap(bad.singleResponse(for: revoked, issuer: issuer))
            guard case .revoked(let time, let reason) = revocation.status else {
                return XCTFail("\(url): \(revocation.status)")
            }
            // index.txt records the revocation when mkpki.sh ran, a moment ago (to the second).
            XCTAssertLessThan(abs(time.timeIntervalSinceNow), 300, "\(time)")
            XCTAssertNil(reason, "index.txt gives no reason")
            XCTAssertTrue(bad.verifySignature(with: responder))
        }
    }

    func testSHA256CertIDsAreMatched() throws {
        let response = try client(loopback.services.ocspURL).fetch(certificate: signer, issuer: issuer, hash: .sha256)
        let single = try XCTUnwrap(response.singleResponse(for: signer, issuer: issuer))
        XCTAssertEqual(single.certIDHash, .sha256)
        XCTAssertEqual(single.status, .good)
    }

    func testACertificateTheResponderDoesNotKnowIsUnknown() throws {
        let stranger = try certificate(loopback.pki.ocsp)  // issued by the same CA, not in index.txt
        let response = try client(loopback.services.ocspURL).fetch(certificate: stranger, issuer: issuer)
        XCTAssertEqual(response.singleResponse(for: stranger, issuer: issuer)?.status, .unknown)
    }

    func testTheNonceIsEchoedAndChecked() throws {
        let request = try OCSPRequest.make(certificate: signer, issuer: issuer)
        guard case .octetString(let bytes)? = request.nonce else { return XCTFail("\(String(describing: request.nonce))") }
        XCTAssertEqual(bytes.count, 32)
        XCTAssertEqual(request.nonceExtensionValue, [0x04, 0x20] + bytes, "RFC 8954: an OCTET STRING")
        let response = try post(request)
        XCTAssertEqual(response.nonce, bytes)
        XCTAssertTrue(response.echoesNonce(of: request))
        // The same answer does not fit a second request: it would be a replay.
        let another = try OCSPRequest.make(certificate: signer, issuer: issuer)
        XCTAssertFalse(response.echoesNonce(of: another))

        let text = try Shell.run("openssl", ["ocsp", "-reqin", try loopback.write(request.der, "req.der"), "-req_text"])
        XCTAssertTrue(text.stdout.contains("OCSP Nonce:"), text.stdout + text.stderr)
        XCTAssertTrue(text.stdout.replacingOccurrences(of: "\n", with: "").replacingOccurrences(of: " ", with: "")
            .uppercased().contains("0420" + bytes.hexString.uppercased()), text.stdout)
        XCTAssertTrue(text.stdout.contains("Hash Algorithm: sha1"), text.stdout)
    }

    /// BDOC-TM: the nonce is a DER DigestInfo of the signature value, written as the extension value itself.
    func testALegacyDigestInfoNonceRoundTrips() throws {
        let signatureValue: [UInt8] = Array("a signature value".utf8)
        let digestInfo = DigestAlgorithm.sha256.digestInfoPrefix! + Digest.hash(signatureValue, .sha256)
        XCTAssertEqual(digestInfo.count, 51)
        let request = try OCSPRequest.make(certificate: signer, issuer: issuer, nonce: .raw(digestInfo))
        XCTAssertEqual(request.nonceExtensionValue, digestInfo)
        let response = try client(loopback.services.ocspURL).fetch(certificate: signer, issuer: issuer,
                                                                    nonce: .raw(digestInfo))
        XCTAssertEqual(response.nonceExtensionValue, digestInfo)
        XCTAssertEqual(response.nonce, digestInfo, "nothing to strip: it starts with SEQUENCE")
        // A producer that wrapped it in one more OCTET STRING reads the same.
        let wrapped = try client(loopback.services.ocspURL).fetch(certificate: signer, issuer: issuer,
                                                                  nonce: .octetString(digestInfo))
        XCTAssertEqual(wrapped.nonceExtensionValue, [0x04, 51] + digestInfo)
        XCTAssertEqual(wrapped.nonce, digestInfo)
    }

    func testNoNonceIsSentWhenAskedNot() throws {
        let request = try OCSPRequest.make(certificate: signer, issuer: issuer, nonce: nil)
        XCTAssertNil(request.nonceExtensionValue)
        XCTAssertNil(try post(request).nonce)
    }

    func testATamperedResponseFailsItsSignature() throws {
        let response = try client(loopback.services.ocspURL).fetch(certificate: signer, issuer: issuer)
        let responder = try certificate(loopback.pki.ocsp)
        // Change the last digit of producedAt's seconds inside the signed ResponseData.
        let producedAt = try XCTUnwrap(response.producedAt)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMddHHmmss'Z'"
        formatter.timeZone = TimeZone(identifier: "UTC")
        let stamp = Array(formatter.string(from: producedAt).utf8)
        var bytes = response.der
        let at = try XCTUnwrap((0...(bytes.count - stamp.count)).first { Array(bytes[$0..<$0 + stamp.count]) == stamp })
        bytes[at + 13] = bytes[at + 13] == UInt8(ascii: "9") ? UInt8(ascii: "8") : bytes[at + 13] + 1
        let tampered = try OCSPResponse(der: bytes)
        XCTAssertNotEqual(tampered.producedAt, producedAt)
        XCTAssertFalse(tampered.verifySignature(with: responder))
        XCTAssertTrue(response.verifySignature(with: responder))
    }

    func testFreshnessFollowsOCSPCheckValidity() throws {
        let response = try client(loopback.services.ocspURL).fetch(certificate: signer, issuer: issuer)
        let single = try XCTUnwrap(response.singleResponse(for: signer, issuer: issuer))
        let thisUpdate = single.thisUpdate
        XCTAssertNoThrow(try single.checkValidity(now: thisUpdate.addingTimeInterval(119)))
        XCTAssertThrowsError(try single.checkValidity(now: thisUpdate.addingTimeInterval(121))) {
            XCTAssertTrue("\($0)".contains("too old"), "\($0)")
        }
        XCTAssertNoThrow(try single.checkValidity(now: thisUpdate.addingTimeInterval(-899)))
        XCTAssertThrowsError(try single.checkValidity(now: thisUpdate.addingTimeInterval(-901))) {
            XCTAssertTrue("\($0)".contains("not yet valid"), "\($0)")
        }
        let nextUpdate = try XCTUnwrap(single.nextUpdate)
        XCTAssertNoThrow(try single.checkValidity(now: nextUpdate.addingTimeInterval(899), maxAge: nil))
        XCTAssertThrowsError(try single.checkValidity(now: nextUpdate.addingTimeInterval(901), maxAge: nil)) {
            XCTAssertTrue("\($0)".contains("expired"), "\($0)")
        }
    }

    func testUnsuccessfulStatusesAreNamed() throws {
        // OCSPResponse ::= SEQUENCE { responseStatus ENUMERATED } with no body, for each status.
        let sentences: [UInt8: String] = [1: "malformedRequest", 2: "internalError", 3: "try again later",
                                          5: "sigRequired", 6: "does not serve this client"]
        for (code, sentence) in sentences {
            let response = try OCSPResponse(der: [0x30, 0x03, 0x0A, 0x01, code])
            XCTAssertEqual(response.status.rawValue, Int(code))
            XCTAssertTrue(response.status.description.contains(sentence), response.status.description)
            XCTAssertNil(response.producedAt)
            XCTAssertNil(response.singleResponse(for: signer, issuer: issuer))
        }
        XCTAssertThrowsError(try OCSPResponse(der: [0x30, 0x03, 0x0A, 0x01, 0x04]))  // 4 is not a status
        XCTAssertThrowsError(try OCSPResponse(der: Array("not DER".utf8)))

        let folder = try TemporaryFolder("ocsp-http")
        defer { folder.remove() }
        let server = try TestHTTPServer.start(in: folder.path)
        defer { server.stop() }
        XCTAssertThrowsError(try client("http://127.0.0.1:\(server.port)/ocsp-unauthorized")
            .fetch(certificate: signer, issuer: issuer)) {
            XCTAssertTrue("\($0)".contains("(unauthorized)"), "\($0)")
        }
        XCTAssertThrowsError(try client("http://127.0.0.1:\(server.port)/status/503")
            .fetch(certificate: signer, issuer: issuer)) {
            XCTAssertTrue("\($0)".hasSuffix("/status/503 answered HTTP 503"), "\($0)")
        }
    }

    private func post(_ request: OCSPRequest) throws -> OCSPResponse {
        let reply = try loopback.http.post(loopback.services.ocspURL, body: request.der,
                                           contentType: "application/ocsp-request",
                                           accept: "application/ocsp-response", timeout: 10)
        XCTAssertEqual(reply.status, 200)
        return try OCSPResponse(der: reply.body)
    }
}

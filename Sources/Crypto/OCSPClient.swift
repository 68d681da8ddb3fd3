import Foundation

/// Asks an OCSP responder over HTTP about one certificate and checks that the answer is for us:
/// status successful, our nonce echoed, a SingleResponse for our CertID. Freshness
/// (`OCSPSingleResponse.checkValidity`) and trust in the responder are the caller's steps.
public struct OCSPClient: Sendable {
    public let url: String
    public var timeout: Double = 20
    private let post: HTTPPost

    /// `post` is the transport, normally `HTTPClient.post` from the HTTP module.
    public init(url: String, post: @escaping HTTPPost) {
        self.url = url
        self.post = post
    }

    /// Transport failures are rethrown as they come (an `HTTPError`); the rest are `CryptoError`s.
    public func fetch(certificate: Certificate, issuer: Certificate, hash: DigestAlgorithm = .sha1,
                      nonce: OCSPRequest.Nonce? = .random) throws -> OCSPResponse {
        let request = try OCSPRequest.make(certificate: certificate, issuer: issuer, hash: hash, nonce: nonce)
        let reply = try post(url, request.der, "application/ocsp-request", "application/ocsp-response", timeout)
        guard reply.status == 200 else { throw CryptoError("\(url) answered HTTP \(reply.status)") }
        let mediaType = reply.contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard mediaType == "application/ocsp-response" else {
            throw CryptoError("\(url) answered \(reply.contentType ?? "without a content type"), not application/ocsp-response")
        }
        let response = try OCSPResponse(der: reply.body)
        guard response.status == .successful else { throw CryptoError("\(url): \(response.status)") }
        if request.nonceExtensionValue != nil && !response.echoesNonce(of: request) {
            throw CryptoError("the OCSP response from \(url) does not echo our nonce (a replayed or foreign answer)")
        }
        guard response.singleResponse(for: certificate, issuer: issuer) != nil else {
            throw CryptoError("the OCSP response from \(url) says nothing about \(certificate.subjectLine)")
        }
        return response
    }
}

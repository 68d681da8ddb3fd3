import Foundation

/// Asks an RFC 3161 time-stamping service over HTTP for a token, and checks that it answers us.
public struct TimeStampClient: Sendable {
    public let url: String
    public var timeout: Double = 20
    private let post: HTTPPost

    /// `post` is the transport, normally `HTTPClient.post` from the HTTP module.
    public init(url: String, post: @escaping HTTPPost) {
        self.url = url
        self.post = post
    }

    /// Time-stamps `digest` (already hashed with `algorithm`). Transport failures are rethrown as
    /// they come (an `HTTPError`, so cancellation stays recognisable); the rest are `CryptoError`s.
    public func stamp(digest: [UInt8], algorithm: DigestAlgorithm = .sha256) throws -> TimeStampToken {
        let request = try TimeStampRequest.make(imprint: digest, algorithm: algorithm)
        let reply = try post(url, request.der, "application/timestamp-query", "application/timestamp-reply", timeout)
        switch reply.status {
        case 200: break
        case 403: throw CryptoError("the time-stamp service \(url) refused this client (HTTP 403 Forbidden): "
                                    + "it may serve registered users or addresses only")
        case 429: throw CryptoError("the time-stamp service \(url) is limiting requests (HTTP 429 Too Many Requests); "
                                    + "try again later")
        default: throw CryptoError("\(url) answered HTTP \(reply.status)")
        }
        let mediaType = reply.contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard mediaType == "application/timestamp-reply" else {
            throw CryptoError("\(url) answered \(reply.contentType ?? "without a content type"), "
                              + "not application/timestamp-reply")
        }
        return try TimeStampResponse(der: reply.body, request: request).token
    }
}

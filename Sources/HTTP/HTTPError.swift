/// Why an HTTP exchange failed, as one sentence a user can act on.
public enum HTTPError: Error, CustomStringConvertible, Sendable {
    case invalidRequest(String)
    case cannotConnect(host: String, message: String)
    case timedOut(url: String, seconds: Double)
    /// The server answered, but not with 2xx; the response is kept for callers that read error bodies.
    case status(url: String, response: HTTPResponse)
    /// Pinning was asked for and the server showed a certificate that is not among the pinned ones.
    case certificateNotPinned(host: String, message: String)
    case tls(host: String, message: String)
    /// A server that may demand a TLS client certificate ended the connection in or right after
    /// the handshake: without one presented it demanded one; with one, it refused it.
    case clientCertificate(host: String, presented: Bool, message: String)
    case cancelled
    case tooLarge(url: String, limit: Int)
    case pinnedCertificateUnreadable(String)
    case failed(url: String, message: String)

    public var description: String {
        switch self {
        case .invalidRequest(let why): "invalid HTTP request: \(why)"
        case .cannotConnect(let host, let message): "could not connect to \(host): \(message)"
        case .timedOut(let url, let seconds): "\(url) timed out after \(Self.seconds(seconds)) s"
        case .status(let url, let response): "\(url) answered HTTP \(response.status)"
        case .certificateNotPinned(let host, let message):
            "TLS certificate of \(host) is not the pinned one (\(message))"
        case .tls(let host, let message): "TLS connection to \(host) failed: \(message)"
        case .clientCertificate(let host, let presented, let message):
            presented ? "\(host) refused the TLS client certificate (\(message))"
                : "\(host) requires a TLS client certificate (\(message))"
        case .cancelled: "the request was cancelled"
        case .tooLarge(let url, let limit): "\(url) sent more than \(limit) bytes, the most accepted"
        case .pinnedCertificateUnreadable(let why): "pinned TLS certificate: \(why)"
        case .failed(let url, let message): "request to \(url) failed: \(message)"
        }
    }

    /// "2", "0.5": whole seconds without a fraction.
    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

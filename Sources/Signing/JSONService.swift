import Configuration
import Foundation
import HTTP

/// JSON over HTTPS to a remote signing service (Mobile-ID, Smart-ID): TLS pinned to the
/// configured certificates (`<prefix>.tls-cert`), the user agent, proxy and cancellation of the
/// signing, and answers of any HTTP status handed back with their JSON for the caller to phrase.
public struct JSONService: Sendable {
    /// The service's name in messages ("Mobile-ID").
    public let name: String
    /// The base URL without a trailing slash.
    public let baseURL: String
    let http: HTTPClient

    /// An answer: its HTTP status and the JSON object it held (empty when it held none).
    public struct Answer: @unchecked Sendable {
        public let status: Int
        public let json: [String: Any]
        public let body: [UInt8]
    }

    /// `prefix` is the configuration prefix (`mobile-id`): `<prefix>.url` (else `defaultURL`) and
    /// `<prefix>.tls-cert`, a PEM file of the certificates to pin. Without a pinned certificate
    /// the service is refused: an unpinned connection would let a man in the middle ask the user
    /// to sign a hash of its choosing.
    public init(name: String, prefix: String, defaultURL: String, context: SignerContext) throws {
        self.name = name
        let configuration = context.configuration
        var url = configuration["\(prefix).url"] ?? defaultURL
        while url.hasSuffix("/") { url.removeLast() }
        baseURL = url
        guard let pins = configuration["\(prefix).tls-cert"], !pins.isEmpty else {
            throw SigningError("\(name): no TLS certificate to pin is configured: set \(prefix).tls-cert to a PEM file with "
                + "the service's certificate (SK ID Solutions publishes them); asicfs does not talk to a signing service unpinned")
        }
        var options = HTTPClient.Options(version: asicfsVersion, pinnedCertificates: [.pemFile(pins)],
                                         cancellation: context.cancellation, maxResponseSize: 1 << 20)
        if let proxy = configuration["proxy"] { options.proxy = .url(proxy) }
        do { http = try HTTPClient(options) } catch { throw SigningError("\(name): \(error)") }
    }

    public func post(_ path: String, _ body: [String: Any], timeout: Double = 30) throws -> Answer {
        let data = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])
        return try send(HTTPRequest(url: baseURL + path, method: .post, body: [UInt8](data), contentType: "application/json",
                                    accept: "application/json", timeout: timeout, connectTimeout: min(10, timeout)))
    }

    public func get(_ path: String, timeout: Double = 30) throws -> Answer {
        try send(HTTPRequest(url: baseURL + path, method: .get, accept: "application/json", timeout: timeout,
                             connectTimeout: min(10, timeout)))
    }

    private func send(_ request: HTTPRequest) throws -> Answer {
        let response: HTTPResponse
        do {
            response = try http.send(request)
        } catch .status(_, let answered) {
            response = answered
        } catch .cancelled {
            throw SigningError("the signing was cancelled; the container is unchanged")
        } catch {
            throw SigningError("\(name): \(error)")
        }
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        return Answer(status: response.status, json: json, body: response.body)
    }
}

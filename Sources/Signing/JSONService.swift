import Configuration
import Foundation
import HTTP
import Trust

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

    /// SK's own hosts for these services. Without `<prefix>.tls-cert` their chain is verified by
    /// the system CA store, the host name checked, and must hold a built-in key pin
    /// (`BuiltInTrust.skServiceTLSPins`: DigiCert's issuing CA and root, a demo host's own key).
    public static let skHosts: Set<String> = ["mid.sk.ee", "tsp.demo.sk.ee", "rp-api.smart-id.com", "sid.demo.sk.ee"]

    /// Whether the demo services are meant: `demo = yes`, or the test trusted lists (`tsl = test`).
    public static func usesDemo(_ configuration: Configuration) -> Bool {
        configuration["demo"] == "yes" || configuration["tsl"] == "test"
    }

    /// The service at `url` (from `baseURL(prefix:…)`); `prefix` is the configuration prefix
    /// (`mobile-id`) of `<prefix>.tls-cert`, a PEM file of the certificates to pin. For SK's hosts
    /// the built-in key pins serve without it; any other service must be pinned: an unpinned
    /// connection would let a man in the middle ask the user to sign a hash of its choosing.
    public init(name: String, prefix: String, url: String, context: SignerContext) throws {
        self.name = name
        let configuration = context.configuration
        baseURL = url
        var pins: [PinnedCertificate] = []
        var keyPins: [String] = []
        if let file = configuration["\(prefix).tls-cert"], !file.isEmpty {
            pins = [.pemFile(file)]
        } else if let host = URLComponents(string: url)?.host, Self.skHosts.contains(host), url.hasPrefix("https://") {
            keyPins = BuiltInTrust.skServiceTLSPins(for: host)
        } else {
            throw SigningError("\(name): no TLS certificate to pin is configured for \(url): set \(prefix).tls-cert to a PEM file with "
                + "the service's certificate or its CA; asicfs does not talk to a signing service unpinned")
        }
        var options = HTTPClient.Options(version: asicfsVersion, pinnedCertificates: pins,
                                         cancellation: context.cancellation, maxResponseSize: 1 << 20)
        options.spkiPins = keyPins
        if let proxy = configuration["proxy"] { options.proxy = .url(proxy) }
        do { http = try HTTPClient(options) } catch { throw SigningError("\(name): \(error)") }
    }

    /// `<prefix>.url`, else the production or (`usesDemo`) the demo URL, without a trailing slash.
    public static func baseURL(prefix: String, productionURL: String, demoURL: String, configuration: Configuration) -> String {
        var url = configuration["\(prefix).url"] ?? (usesDemo(configuration) ? demoURL : productionURL)
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// Whether `url` is a production service of SK (which needs the user's own relying party).
    public static func isSKProduction(_ url: String) -> Bool {
        guard let host = URLComponents(string: url)?.host else { return false }
        return host == "mid.sk.ee" || host == "rp-api.smart-id.com"
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

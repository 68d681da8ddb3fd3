import Foundation

/// One HTTP exchange to make: where, how, what to send and how long to wait.
public struct HTTPRequest: Sendable {
    public enum Method: String, Sendable { case get = "GET", post = "POST" }

    public var url: String
    public var method: Method
    /// Sent as is; never logged (it may hold personal codes or signatures).
    public var body: [UInt8]
    public var contentType: String?
    public var accept: String?
    /// Further headers, e.g. for REST services; names and values must not hold line breaks.
    public var headers: [(name: String, value: String)]
    /// The whole exchange, connection included, in seconds.
    public var timeout: Double
    public var connectTimeout: Double

    public init(url: String, method: Method = .get, body: [UInt8] = [], contentType: String? = nil,
                accept: String? = nil, headers: [(name: String, value: String)] = [],
                timeout: Double = 30, connectTimeout: Double = 10) {
        self.url = url
        self.method = method
        self.body = body
        self.contentType = contentType
        self.accept = accept
        self.headers = headers
        self.timeout = timeout
        self.connectTimeout = connectTimeout
    }

    public static func get(_ url: String, accept: String? = nil, timeout: Double = 30) -> HTTPRequest {
        HTTPRequest(url: url, method: .get, accept: accept, timeout: timeout)
    }

    public static func post(_ url: String, body: [UInt8], contentType: String, accept: String? = nil,
                            timeout: Double = 30) -> HTTPRequest {
        HTTPRequest(url: url, method: .post, body: body, contentType: contentType, accept: accept, timeout: timeout)
    }
}

/// What a server answered with a 2xx status (other statuses are `HTTPError.status`).
public struct HTTPResponse: Sendable {
    public let status: Int
    public let contentType: String?
    public let body: [UInt8]

    /// The content type without parameters, lower-cased ("application/json; charset=utf-8" -> "application/json").
    public var mediaType: String? {
        contentType.map { $0.split(separator: ";").first.map(String.init) ?? "" }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    }

    public init(status: Int, contentType: String?, body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }
}

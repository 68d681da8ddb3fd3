import CCurl
import Foundation

/// One libcurl client for every outside service (time-stamps, OCSP, trusted lists, Mobile-ID,
/// Smart-ID): blocking `send`, so callers run it off the main thread. Each request gets its own
/// curl handle; nothing is shared between threads but the immutable options.
public final class HTTPClient: Sendable {
    public enum Proxy: Sendable, Equatable {
        /// libcurl's default: the http_proxy/https_proxy/no_proxy environment variables.
        case environment
        /// Never a proxy, whatever the environment says.
        case direct
        /// This proxy, e.g. "http://proxy.example:3128".
        case url(String)
    }

    public struct Options: Sendable {
        public var userAgent: String
        public var proxy: Proxy
        /// Empty: the system CA store decides. Otherwise only these certificates are trusted.
        public var pinnedCertificates: [PinnedCertificate]
        /// Key pins over the CA store: base64 SHA-256 of a DER SubjectPublicKeyInfo. When set, the
        /// chain the CA store verified (host name checked as ever) must hold a certificate with one
        /// of these keys (leaf, issuing CA or root). Empty: no key pinning.
        public var spkiPins: [String] = []
        /// A PEM file of the CA certificates to verify against instead of the system's store
        /// (a private CA; the tests' own root). Ignored when `pinnedCertificates` is set.
        public var caFile: String?
        public var cancellation: Cancellation?
        /// Bodies bigger than this are refused (`HTTPError.tooLarge`).
        public var maxResponseSize: Int
        /// Presented when the server asks for a client certificate (mutual TLS).
        public var clientIdentity: (any TLSClientIdentity)?
        /// The server may demand a client certificate: then a handshake or first read that fails
        /// (curl 35, or 56 or 55 as TLS 1.3 reports it) is `HTTPError.clientCertificate`.
        public var clientCertificateMayBeRequired = false

        public init(version: String, userAgent: String? = nil, proxy: Proxy = .environment,
                    pinnedCertificates: [PinnedCertificate] = [], cancellation: Cancellation? = nil,
                    maxResponseSize: Int = 16 << 20) {
            self.userAgent = userAgent ?? "asicfs/\(version)"
            self.proxy = proxy
            self.pinnedCertificates = pinnedCertificates
            self.cancellation = cancellation
            self.maxResponseSize = maxResponseSize
        }
    }

    public let options: Options
    /// The pinned certificates as a PEM bundle, read once (nil: no pinning).
    private let pinnedBundle: [UInt8]?
    /// The key pins' 32-byte digests, one after another.
    private let spkiDigests: [UInt8]

    public init(_ options: Options) throws(HTTPError) {
        self.options = options
        pinnedBundle = options.pinnedCertificates.isEmpty
            ? nil : Array(try PinnedCertificate.pemBundle(options.pinnedCertificates).utf8)
        var digests: [UInt8] = []
        for pin in options.spkiPins {
            guard let digest = Data(base64Encoded: pin), digest.count == 32 else {
                throw .invalidRequest("'\(pin)' is not a key pin (the base64 SHA-256 of a SubjectPublicKeyInfo)")
            }
            digests += digest
        }
        spkiDigests = digests
    }

    /// Sends the request and returns a 2xx response; every other outcome is an `HTTPError`.
    /// `body`, when given, is posted instead of `request.body`: bytes the caller lends (a body
    /// holding a PIN) and wipes afterwards; curl copies them, nothing here keeps a copy.
    /// `authorization` is handed to curl the same way.
    public func send(_ request: HTTPRequest, body lent: UnsafeRawBufferPointer? = nil,
                     authorization: HTTPAuthorization? = nil) throws(HTTPError) -> HTTPResponse {
        try Self.validate(request)
        guard ccurl_load() == 0 else { throw .failed(url: request.url, message: String(cString: ccurl_load_error())) }
        if options.cancellation?.isCancelled == true { throw .cancelled }
        guard let curl = ccurl_easy_init() else { throw .failed(url: request.url, message: "libcurl has no memory") }
        defer { ccurl_easy_cleanup(curl) }
        let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        defer { errorText.deallocate() }
        errorText.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        var headers: UnsafeMutablePointer<curl_slist>? = nil
        defer { ccurl_slist_free_all(headers) }

        let transfer = CurlTransfer(limit: options.maxResponseSize, cancellation: options.cancellation,
                                    identity: options.clientIdentity, spkiDigests: spkiDigests)
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var failedOption = false
        func set(_ result: CURLcode) { if result != CURLE_OK { failedOption = true } }

        set(ccurl_setopt_ptr(curl, CURLOPT_ERRORBUFFER, errorText))
        set(ccurl_setopt_str(curl, CURLOPT_URL, request.url))
        set(ccurl_setopt_str(curl, CURLOPT_PROTOCOLS_STR, "http,https"))
        set(ccurl_setopt_long(curl, CURLOPT_NOSIGNAL, 1))  // threads: no SIGALRM for timeouts
        set(ccurl_setopt_str(curl, CURLOPT_USERAGENT, options.userAgent))
        set(ccurl_setopt_long(curl, CURLOPT_TIMEOUT_MS, Self.milliseconds(request.timeout)))
        set(ccurl_setopt_long(curl, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(request.connectTimeout)))
        set(ccurl_setopt_off(curl, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(options.maxResponseSize)))
        set(ccurl_setopt_writefn(curl, CurlTransfer.write))
        set(ccurl_setopt_ptr(curl, CURLOPT_WRITEDATA, context))
        set(ccurl_setopt_xferinfofn(curl, CurlTransfer.progress))
        set(ccurl_setopt_ptr(curl, CURLOPT_XFERINFODATA, context))
        set(ccurl_setopt_long(curl, CURLOPT_NOPROGRESS, 0))
        switch options.proxy {
        case .environment: break
        case .direct: set(ccurl_setopt_str(curl, CURLOPT_PROXY, ""))
        case .url(let proxy): set(ccurl_setopt_str(curl, CURLOPT_PROXY, proxy))
        }
        set(ccurl_setopt_long(curl, CURLOPT_SSL_VERIFYPEER, 1))
        set(ccurl_setopt_long(curl, CURLOPT_SSL_VERIFYHOST, 2))
        if let pinnedBundle {
            // The pins replace both default CA locations (Debian's libcurl has a CA file and a CA path).
            set(ccurl_setopt_str(curl, CURLOPT_CAINFO, nil))
            set(ccurl_setopt_str(curl, CURLOPT_CAPATH, nil))
            var bundle = pinnedBundle
            bundle.withUnsafeMutableBytes { bytes in
                var blob = curl_blob(data: bytes.baseAddress, len: bytes.count, flags: UInt32(CURL_BLOB_COPY))
                set(ccurl_setopt_ptr(curl, CURLOPT_CAINFO_BLOB, &blob))
            }
        } else if let caFile = options.caFile {
            set(ccurl_setopt_str(curl, CURLOPT_CAINFO, caFile))
            set(ccurl_setopt_str(curl, CURLOPT_CAPATH, nil))
        }
        if options.clientIdentity != nil || !spkiDigests.isEmpty {
            set(ccurl_setopt_sslctxfn(curl, CurlTransfer.prepareTLS))
            set(ccurl_setopt_ptr(curl, CURLOPT_SSL_CTX_DATA, context))
        }
        switch authorization {
        case nil: break
        case .basic(let user, let password)?:
            set(ccurl_setopt_long(curl, CURLOPT_HTTPAUTH, ccurl_auth_basic()))
            set(ccurl_setopt_str(curl, CURLOPT_USERNAME, user))
            set(ccurl_setopt_str(curl, CURLOPT_PASSWORD, password))
        case .bearer(let token)?:
            set(ccurl_setopt_long(curl, CURLOPT_HTTPAUTH, ccurl_auth_bearer()))
            set(ccurl_setopt_str(curl, CURLOPT_XOAUTH2_BEARER, token))
        }

        switch request.method {
        case .get:
            set(ccurl_setopt_long(curl, CURLOPT_HTTPGET, 1))
        case .post:
            set(ccurl_setopt_long(curl, CURLOPT_POST, 1))
            // COPYPOSTFIELDS: curl keeps its own copy, so the body need not outlive this call. The
            // bytes are only read (no copy of ours is made that could not be wiped).
            func post(_ body: UnsafeRawBufferPointer) {
                set(ccurl_setopt_off(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
                withUnsafePointer(to: 0 as UInt8) { zero in
                    set(ccurl_setopt_ptr(curl, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: body.baseAddress ?? UnsafeRawPointer(zero))))
                }
            }
            if let lent { post(lent) } else { request.body.withUnsafeBytes { post($0) } }
        }
        var lines: [String] = []
        if let contentType = request.contentType { lines.append("Content-Type: \(contentType)") }
        if let accept = request.accept { lines.append("Accept: \(accept)") }
        lines += request.headers.map { "\($0.name): \($0.value)" }
        lines.append("Expect:")  // no 100-continue round trip (a 1 s stall with HTTP/1.0 servers)
        for line in lines { headers = ccurl_slist_append(headers, line) }
        set(ccurl_setopt_ptr(curl, CURLOPT_HTTPHEADER, headers))
        guard !failedOption else { throw .failed(url: request.url, message: "libcurl refused an option") }

        let started = Date()
        let code = withExtendedLifetime(transfer) { ccurl_easy_perform(curl) }
        var status = 0
        _ = ccurl_getinfo_long(curl, CURLINFO_RESPONSE_CODE, &status)
        if code != CURLE_OK {
            let curlText = String(cString: errorText)
            let message = curlText.isEmpty ? String(cString: ccurl_easy_strerror(code)) : curlText
            throw error(for: code, message: message, request: request, transfer: transfer,
                        elapsed: Date().timeIntervalSince(started), answered: status != 0)
        }
        var contentType: UnsafeMutablePointer<CChar>? = nil
        _ = ccurl_getinfo_str(curl, CURLINFO_CONTENT_TYPE, &contentType)
        let response = HTTPResponse(status: status, contentType: contentType.map { String(cString: $0) },
                                    body: transfer.body)
        guard (200..<300).contains(status) else { throw .status(url: request.url, response: response) }
        return response
    }

    /// A POST that hands back whatever status the server answered, with plain Swift types, for
    /// clients in modules that do not import HTTP: `TimeStampClient(url: u, post: client.post)`.
    public func post(_ url: String, body: [UInt8], contentType: String, accept: String,
                     timeout: Double) throws(HTTPError) -> (status: Int, contentType: String?, body: [UInt8]) {
        let request = HTTPRequest(url: url, method: .post, body: body, contentType: contentType, accept: accept,
                                  timeout: timeout, connectTimeout: min(10, timeout))
        do {
            let response = try send(request)
            return (response.status, response.contentType, response.body)
        } catch .status(_, let response) {
            return (response.status, response.contentType, response.body)
        }
    }

    private func error(for code: CURLcode, message: String, request: HTTPRequest, transfer: CurlTransfer,
                       elapsed: TimeInterval, answered: Bool) -> HTTPError {
        let host = URLComponents(string: request.url)?.host ?? request.url
        if transfer.identityRefused {
            return .tls(host: host, message: "OpenSSL refused the TLS client certificate or its key")
        }
        // TLS 1.2 fails the handshake (35); TLS 1.3 ends it before the server has checked the
        // client's certificate, so its alert arrives on the first read (56), or, when the server
        // has closed the connection already, as a failed send of the request (55).
        if options.clientCertificateMayBeRequired, !answered, request.url.lowercased().hasPrefix("https://"),
           code == CURLE_SSL_CONNECT_ERROR || code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR {
            return .clientCertificate(host: host, presented: options.clientIdentity != nil, message: message)
        }
        switch code {
        case CURLE_ABORTED_BY_CALLBACK:
            return .cancelled
        case CURLE_FILESIZE_EXCEEDED:
            return .tooLarge(url: request.url, limit: options.maxResponseSize)
        case CURLE_WRITE_ERROR where transfer.exceededLimit:
            return .tooLarge(url: request.url, limit: options.maxResponseSize)
        case CURLE_OPERATION_TIMEDOUT:
            // Which limit fired: the connect one when we stopped well before the total.
            let connectLimit = min(request.connectTimeout, request.timeout)
            let seconds = elapsed + 0.25 < request.timeout ? connectLimit : request.timeout
            return .timedOut(url: request.url, seconds: seconds)
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .cannotConnect(host: host, message: message)
        case CURLE_PEER_FAILED_VERIFICATION where pinnedBundle != nil || transfer.pinsRefused:
            return .certificateNotPinned(host: host, message: message)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR:
            return .tls(host: host, message: message)
        default:
            return .failed(url: request.url, message: message)
        }
    }

    private static func validate(_ request: HTTPRequest) throws(HTTPError) {
        let lower = request.url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            throw .invalidRequest("\(request.url) is not an http or https URL")
        }
        let texts = [request.url, request.contentType ?? "", request.accept ?? ""]
            + request.headers.flatMap { [$0.name, $0.value] }
        // A line break would let one header smuggle in another.
        guard !texts.contains(where: { $0.contains("\r") || $0.contains("\n") }) else {
            throw .invalidRequest("a header or the URL holds a line break")
        }
        guard request.timeout > 0, request.connectTimeout > 0 else {
            throw .invalidRequest("timeouts must be positive")
        }
    }

    private static func milliseconds(_ seconds: Double) -> Int { max(1, Int((seconds * 1000).rounded())) }
}

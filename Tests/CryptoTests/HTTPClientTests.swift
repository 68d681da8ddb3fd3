import Foundation
import HTTP
import TestTools
import XCTest

/// HTTPClient against a loopback server that answers, fails, hangs or floods on request.
final class HTTPClientTests: XCTestCase {
    nonisolated(unsafe) private static var folder: TemporaryFolder?
    nonisolated(unsafe) private static var server: LoopbackProcess?

    private var base: String { "http://127.0.0.1:\(Self.server!.port)" }

    override func setUpWithError() throws {
        if Self.server == nil {
            let folder = try TemporaryFolder("http")
            Self.folder = folder
            Self.server = try TestHTTPServer.start(in: folder.path)
        }
    }

    override class func tearDown() {
        server?.stop()
        folder?.remove()
        server = nil
        super.tearDown()
    }

    private func client(cancellation: Cancellation? = nil, maxResponseSize: Int = 16 << 20) throws -> HTTPClient {
        try HTTPClient(.init(version: "9.9", cancellation: cancellation, maxResponseSize: maxResponseSize))
    }

    /// The error `send` threw, or a failure if it did not throw.
    private func failure(_ request: HTTPRequest, _ client: HTTPClient) throws -> HTTPError? {
        do {
            let response = try client.send(request)
            XCTFail("expected an error, got HTTP \(response.status)")
            return nil
        } catch {
            return error
        }
    }

    func testPostSendsBodyAndHeadersAndReadsTheAnswer() throws {
        var request = HTTPRequest.post(base + "/echo", body: Array("{\"a\":1}".utf8) + [0, 255],
                                       contentType: "application/json", accept: "application/json")
        request.headers = [("X-Extra", "yes")]
        let response = try client().send(request)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.mediaType, "application/json")
        XCTAssertEqual(response.contentType, "application/json; charset=utf-8")
        let seen = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        XCTAssertEqual(seen["method"] as? String, "POST")
        XCTAssertEqual(seen["contentType"] as? String, "application/json")
        XCTAssertEqual(seen["accept"] as? String, "application/json")
        XCTAssertEqual(seen["userAgent"] as? String, "asicfs/9.9")
        XCTAssertEqual(seen["extra"] as? String, "yes")
        XCTAssertTrue(seen["expect"] is NSNull, "no Expect: 100-continue")
        XCTAssertEqual(seen["body"] as? String, "7b2261223a317d00ff")
    }

    func testGetWorks() throws {
        let response = try client().send(.get(base + "/echo"))
        let seen = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        XCTAssertEqual(seen["method"] as? String, "GET")
        XCTAssertEqual(seen["body"] as? String, "")
    }

    func testConnectionRefusedNamesTheHost() throws {
        let port = try Self.closedPort()
        let error = try failure(.get("http://127.0.0.1:\(port)/x"), client())
        guard case .cannotConnect(let host, _) = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(host, "127.0.0.1")
        XCTAssertTrue(error!.description.hasPrefix("could not connect to 127.0.0.1: "), error!.description)
    }

    func testErrorStatusesNameTheStatusAndKeepTheBody() throws {
        for code in [404, 500, 503] {
            let url = base + "/status/\(code)"
            let error = try failure(.get(url), client())
            guard case .status(_, let response) = error else { return XCTFail("\(String(describing: error))") }
            XCTAssertEqual(response.status, code)
            XCTAssertEqual(response.body, Array("status body\n".utf8))
            XCTAssertEqual(error!.description, "\(url) answered HTTP \(code)")
        }
    }

    func testPostHandsBackErrorStatusesForCallersToPhrase() throws {
        let reply = try client().post(base + "/status/429", body: [1], contentType: "application/x", accept: "*/*",
                                      timeout: 5)
        XCTAssertEqual(reply.status, 429)
    }

    func testSilentServerTimesOutInTheConfiguredTime() throws {
        let started = Date()
        let error = try failure(HTTPRequest(url: base + "/hang", timeout: 1), client())
        let elapsed = Date().timeIntervalSince(started)
        guard case .timedOut(_, let seconds) = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(seconds, 1)
        XCTAssertEqual(error!.description, "\(base)/hang timed out after 1 s")
        XCTAssertGreaterThanOrEqual(elapsed, 0.9)
        XCTAssertLessThan(elapsed, 2.5)
    }

    func testCancellationStopsAWaitingRequest() throws {
        let cancellation = Cancellation()
        let client = try client(cancellation: cancellation)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { cancellation.cancel() }
        let started = Date()
        let error = try failure(HTTPRequest(url: base + "/hang", timeout: 20), client)
        guard case .cancelled = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2.5, "stopped soon after the cancel")
        XCTAssertTrue(cancellation.isCancelled)
        // Once cancelled, the client sends nothing more.
        guard case .cancelled = try failure(.get(base + "/text"), client) else { return XCTFail("not cancelled") }
    }

    func testBodiesOverTheLimitAreRefused() throws {
        let client = try client(maxResponseSize: 100_000)
        XCTAssertEqual(try client.send(.get(base + "/big/100000")).body.count, 100_000)
        for path in ["/big/100001", "/stream/300000"] {  // announced length, and no length at all
            let error = try failure(.get(base + path), client)
            guard case .tooLarge(_, let limit) = error else { return XCTFail(path + ": \(String(describing: error))") }
            XCTAssertEqual(limit, 100_000)
            XCTAssertEqual(error!.description, "\(base)\(path) sent more than 100000 bytes, the most accepted")
        }
        XCTAssertEqual(try client.send(.get(base + "/stream/5000")).body, Array(repeating: UInt8(ascii: "y"), count: 5000))
    }

    func testHeaderWithALineBreakIsRefused() throws {
        var request = HTTPRequest.get(base + "/echo")
        request.headers = [("X-Extra", "a\r\nX-Injected: 1")]
        guard case .invalidRequest = try failure(request, client()) else { return XCTFail("accepted") }
        guard case .invalidRequest = try failure(.get("file:///etc/passwd"), client()) else { return XCTFail("accepted") }
    }

    /// A port nobody listens on: bind one, note it, close it.
    private static func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw ShellError("cannot bind a loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

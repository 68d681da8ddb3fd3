import Foundation
import HTTP
import TestTools
import XCTest

/// Key pins over the CA store (`HTTPClient.Options.spkiPins`, how SK's services are checked): a
/// loopback HTTPS server with a chain root -> issuing CA -> leaf, made with the openssl command
/// line. The chain must verify with the CA store given (the test root stands for the system
/// store) and hold a certificate whose key is pinned, whichever member it is.
final class SPKIPinningTests: XCTestCase {
    nonisolated(unsafe) private static var tls: LoopbackTLSServer?

    private var dir: String { Self.tls!.dir }
    private var url: String { Self.tls!.url }

    override func setUpWithError() throws {
        guard Self.tls == nil else { return }
        Self.tls = try LoopbackTLSServer("spki", making: """
            key root.key; key issuing.key; key server.key; key other.key
            printf 'basicConstraints=critical,CA:true\\nkeyUsage=critical,keyCertSign,cRLSign\\n' > ca.ext
            openssl req -x509 -new -key root.key -subj '/CN=asicfs test TLS root' -days 2 -out root.pem \
              -addext basicConstraints=critical,CA:true -addext keyUsage=critical,keyCertSign
            openssl req -x509 -new -key other.key -subj '/CN=asicfs other TLS root' -days 2 -out other-root.pem \
              -addext basicConstraints=critical,CA:true -addext keyUsage=critical,keyCertSign
            openssl req -new -key issuing.key -subj '/CN=asicfs test TLS issuing CA' -out issuing.csr
            openssl x509 -req -in issuing.csr -CA root.pem -CAkey root.key -set_serial 2 -days 2 -extfile ca.ext \
              -out issuing.pem 2>/dev/null
            openssl req -new -key server.key -subj '/CN=127.0.0.1' -out server.csr
            openssl x509 -req -in server.csr -CA issuing.pem -CAkey issuing.key -set_serial 3 -days 2 -extfile leaf.ext \
              -out server.pem 2>/dev/null
            cat server.pem issuing.pem > chain.pem
            # The pins, computed the way SK publishes them.
            for c in root issuing server other-root; do
              openssl x509 -in $c.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64 > $c.pin
            done
            """, certificate: "chain.pem", key: "server.key")
    }

    override class func tearDown() {
        tls?.stop()
        tls = nil
        super.tearDown()
    }

    private func pin(_ name: String) throws -> String {
        try String(contentsOfFile: "\(dir)/\(name).pin", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func send(pins: [String], caFile: String) throws -> Result<HTTPResponse, HTTPError> {
        var options = HTTPClient.Options(version: "test")
        options.spkiPins = pins
        options.caFile = caFile
        let client = try HTTPClient(options)
        do { return .success(try client.send(.get(url, timeout: 5))) } catch { return .failure(error) }
    }

    func testAPinOnAnyMemberOfTheVerifiedChainIsAccepted() throws {
        for member in ["issuing", "root", "server"] {
            XCTAssertEqual(try send(pins: [try pin(member)], caFile: dir + "/root.pem").get().body, Array("hello".utf8), member)
        }
        // One match among several pins is enough.
        XCTAssertEqual(try send(pins: [try pin("other-root"), try pin("issuing")], caFile: dir + "/root.pem").get().status, 200)
    }

    func testAChainWithNoPinnedKeyIsRefusedWithThePinningError() throws {
        guard case .failure(let error) = try send(pins: [try pin("other-root")], caFile: dir + "/root.pem") else {
            return XCTFail("a chain holding no pinned key was accepted")
        }
        guard case .certificateNotPinned(let host, _) = error else { return XCTFail(error.description) }
        XCTAssertEqual(host, "127.0.0.1")
    }

    /// A pin does not make a chain trusted: it must verify with the CA store first.
    func testAPinnedChainTheCAStoreDoesNotTrustIsRefused() throws {
        guard case .failure(let error) = try send(pins: [try pin("issuing"), try pin("root")], caFile: dir + "/other-root.pem") else {
            return XCTFail("a chain the CA store does not trust was accepted")
        }
        guard case .tls(let host, let message) = error else { return XCTFail(error.description) }
        XCTAssertEqual(host, "127.0.0.1")
        XCTAssertTrue(message.contains("certificate"), message)
    }

    func testAMalformedPinIsRefusedUpFront() throws {
        var options = HTTPClient.Options(version: "test")
        options.spkiPins = ["not a pin"]
        XCTAssertThrowsError(try HTTPClient(options))
        options.spkiPins = [Data(repeating: 1, count: 20).base64EncodedString()]
        XCTAssertThrowsError(try HTTPClient(options))
    }
}

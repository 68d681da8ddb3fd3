import Foundation
import HTTP
import TestTools
import XCTest

/// Certificate pinning against a loopback HTTPS server whose certificate a throwaway CA issued
/// (like a real service's: not self-signed), made with the openssl command line.
final class TLSPinningTests: XCTestCase {
    nonisolated(unsafe) private static var tls: LoopbackTLSServer?

    private var dir: String { Self.tls!.dir }
    private var url: String { Self.tls!.url }

    override func setUpWithError() throws {
        guard Self.tls == nil else { return }
        Self.tls = try LoopbackTLSServer("tls", making: """
            key ca.key; key server.key; key other.key
            openssl req -x509 -new -key ca.key -subj '/CN=asicfs test TLS CA' -days 2 -out ca.pem \
              -addext basicConstraints=critical,CA:true -addext keyUsage=critical,keyCertSign
            openssl req -new -key server.key -subj '/CN=127.0.0.1' -out server.csr
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -set_serial 2 -days 2 -extfile leaf.ext \
              -out server.pem 2>/dev/null
            openssl x509 -in server.pem -outform DER -out server.der
            openssl req -x509 -new -key other.key -subj '/CN=127.0.0.1' -days 2 -out other.pem \
              -addext subjectAltName=IP:127.0.0.1
            """, certificate: "server.pem", key: "server.key")
    }

    override class func tearDown() {
        tls?.stop()
        tls = nil
        super.tearDown()
    }

    private func send(pinning pins: [PinnedCertificate]) throws -> Result<HTTPResponse, HTTPError> {
        let client = try HTTPClient(.init(version: "test", pinnedCertificates: pins))
        do { return .success(try client.send(.get(url, timeout: 5))) } catch { return .failure(error) }
    }

    func testThePinnedServerCertificateIsAccepted() throws {
        XCTAssertEqual(try send(pinning: [.pemFile(dir + "/server.pem")]).get().body, Array("hello".utf8))
        let der = try XCTUnwrap(FileManager.default.contents(atPath: dir + "/server.der"))
        XCTAssertEqual(try send(pinning: [.der([UInt8](der))]).get().status, 200)
        // One match among several pins is enough (e.g. this year's and next year's certificate).
        XCTAssertEqual(try send(pinning: [.pemFile(dir + "/other.pem"), .pemFile(dir + "/server.pem")]).get().status, 200)
        // A pinned CA is a trust anchor too: it accepts what it issued.
        XCTAssertEqual(try send(pinning: [.pemFile(dir + "/ca.pem")]).get().status, 200)
    }

    func testAnotherCertificateIsRefusedWithThePinningError() throws {
        guard case .failure(let error) = try send(pinning: [.pemFile(dir + "/other.pem")]) else {
            return XCTFail("a server whose certificate is not pinned was accepted")
        }
        guard case .certificateNotPinned(let host, _) = error else { return XCTFail(error.description) }
        XCTAssertEqual(host, "127.0.0.1")
        XCTAssertTrue(error.description.hasPrefix("TLS certificate of 127.0.0.1 is not the pinned one"), error.description)
    }

    func testWithoutPinsTheSystemStoreRefusesAPrivateCA() throws {
        guard case .failure(let error) = try send(pinning: []) else { return XCTFail("a private CA was trusted") }
        guard case .tls(let host, _) = error else { return XCTFail(error.description) }
        XCTAssertEqual(host, "127.0.0.1")
        XCTAssertTrue(error.description.hasPrefix("TLS connection to 127.0.0.1 failed: "), error.description)
    }

    func testUnreadablePinsAreRefusedUpFront() throws {
        XCTAssertThrowsError(try HTTPClient(.init(version: "t", pinnedCertificates: [.pemFile(dir + "/missing.pem")])))
        XCTAssertThrowsError(try HTTPClient(.init(version: "t", pinnedCertificates: [.pemFile(dir + "/leaf.ext")])))
        XCTAssertThrowsError(try HTTPClient(.init(version: "t", pinnedCertificates: [.der([1, 2, 3])])))
    }
}

import Foundation
import TestTools
import XCTest

/// The throwaway PKI (contrib/testpki/mkpki.sh) and the loopback TSA/OCSP services
/// (contrib/testpki/tsa_ocsp_server.py), checked with openssl as an independent client.
final class TestPKITests: XCTestCase {
    private var folder = ""
    private var made: TestPKI!

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "asicfs-pki-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        addTeardownBlock { [folder] in try? FileManager.default.removeItem(atPath: folder) }
    }

    private func pki(_ name: String) -> String { made.path(name) }

    private func text(_ certificate: String) throws -> String {
        try Shell.run("openssl", ["x509", "-in", pki(certificate), "-noout", "-text", "-nameopt", "utf8"]).stdout
    }

    func testTheCertificatesLookLikeTheRealOnes() throws {
        made = try TestPKI.make(in: folder + "/pki", ocspURL: "http://127.0.0.1:1/ocsp")
        let chain = try Shell.run("openssl", ["verify", "-CAfile", pki("root.pem"), "-untrusted", pki("issuing.pem"),
                                              pki("signer.pem"), pki("revoked.pem"), pki("ocsp.pem"), pki("ocsp-rsa.pem")])
        XCTAssertEqual(chain.status, 0, chain.stdout + chain.stderr)
        XCTAssertEqual(try Shell.run("openssl", ["verify", "-CAfile", pki("root.pem"), pki("tsa.pem")]).status, 0)

        let signer = try text("signer.pem")
        XCTAssertTrue(signer.contains("CN=JÕEORG,JAAK-KRISTJAN,38001085718"), signer)
        XCTAssertTrue(signer.contains("serialNumber=PNOEE-38001085718"), signer)
        XCTAssertTrue(signer.contains("X509v3 Key Usage: critical\n                Non Repudiation"), signer)
        XCTAssertTrue(signer.contains("qcStatements"), signer)
        XCTAssertTrue(signer.contains("OCSP - URI:http://127.0.0.1:1/ocsp"), signer)
        let tsa = try text("tsa.pem")
        XCTAssertTrue(tsa.contains("X509v3 Extended Key Usage: critical\n                Time Stamping"), tsa)
        let ocsp = try text("ocsp.pem")
        XCTAssertTrue(ocsp.contains("X509v3 Extended Key Usage: critical\n                OCSP Signing"), ocsp)

        let good = try Shell.run("openssl", ["pkcs12", "-in", pki("signer.p12"), "-passin", "pass:test1234", "-nokeys"])
        XCTAssertEqual(good.status, 0, good.stderr)
        let wrong = try Shell.run("openssl", ["pkcs12", "-in", pki("signer.p12"), "-passin", "pass:wrong", "-nokeys"])
        XCTAssertNotEqual(wrong.status, 0)
    }

    func testTheTimeStampAndOCSPServicesAnswerOnLoopback() throws {
        let services = try TestServices.start(makingPKIIn: folder + "/pki")
        defer { services.stop() }
        made = services.pki
        let base = services.baseURL
        XCTAssertTrue(try text("signer.pem").contains("OCSP - URI:\(base)/ocsp"), "the signer's AIA names this server")

        try Data("data to time-stamp\n".utf8).write(to: URL(fileURLWithPath: folder + "/data.txt"))
        let stamp = try Shell.sh("""
            set -e; cd '\(folder)'
            openssl ts -query -data data.txt -sha256 -cert -out q.tsq 2>/dev/null
            curl -sf --data-binary @q.tsq -H 'Content-Type: application/timestamp-query' \(base)/tsa -o r.tsr
            openssl ts -verify -data data.txt -in r.tsr -CAfile pki/root.pem -untrusted pki/tsa.pem
            """)
        XCTAssertTrue(stamp.stdout.contains("Verification: OK"), stamp.stdout + stamp.stderr)

        for path in ["ocsp", "ocsp-rsa"] {
            let status = try Shell.run("openssl", ["ocsp", "-issuer", pki("issuing.pem"), "-sha256",
                                                   "-cert", pki("signer.pem"), "-cert", pki("revoked.pem"),
                                                   "-url", "\(base)/\(path)", "-CAfile", pki("chain.pem")])
            XCTAssertTrue(status.stdout.contains("signer.pem: good"), path + ": " + status.stdout + status.stderr)
            XCTAssertTrue(status.stdout.contains("revoked.pem: revoked"), path + ": " + status.stdout)
            XCTAssertTrue(status.stderr.contains("Response verify OK"), path + ": " + status.stderr)
        }
        let unknown = try Shell.sh("curl -s -o /dev/null -w '%{http_code}' --data-binary x \(base)/nothing")
        XCTAssertEqual(unknown.stdout, "404")
    }
}

import Foundation
import TestTools
import XCTest

/// The generators behind the trust-list scenarios, checked with independent tools: the dated PKI
/// (contrib/testpki/mkpki_dated.py) with openssl, its loopback services with openssl as client,
/// and a written trusted list (mktrustlist.py) with xmlsec1 and Python's own XML parser.
final class ScenarioGeneratorTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "asicfs-scenario-gen-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        addTeardownBlock { [folder] in try? FileManager.default.removeItem(atPath: folder) }
    }

    private func openssl(_ arguments: [String]) throws -> Shell.Output { try Shell.run("openssl", arguments) }

    /// `openssl x509 -startdate` as a date.
    private func notBefore(_ pem: String) throws -> Date? {
        let line = try openssl(["x509", "-in", pem, "-noout", "-startdate", "-dateopt", "iso_8601"]).stdout
        return TestTime.date(String(line.dropFirst("notBefore=".count)).trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: " ", with: "T"))
    }

    func testTheDatedPKIStartsWhenAskedAndChainsThen() throws {
        let times = TrustScenarioTimes()
        let pki = try TestPKI.makeDated(in: folder + "/pki", caNotBefore: times.caNotBefore, signerNotBefore: times.signerNotBefore,
                                        ocspURL: "http://127.0.0.1:1/ocsp")
        XCTAssertEqual(try notBefore(pki.signer), times.signerNotBefore)
        for ca in [pki.root, pki.issuing, pki.ocsp, pki.tsa, pki.tlSigner] { XCTAssertEqual(try notBefore(ca), times.caNotBefore, ca) }
        func verify(_ pem: String, at time: Date) throws -> Int32 {
            try openssl(["verify", "-attime", String(Int(time.timeIntervalSince1970)), "-CAfile", pki.root,
                         "-untrusted", pki.issuing, pem]).status
        }
        XCTAssertEqual(try verify(pki.signer, at: times.signerNotBefore), 0)
        XCTAssertNotEqual(try verify(pki.signer, at: times.signerNotBefore - 1), 0)
        XCTAssertEqual(try verify(pki.ocsp, at: times.timeStamp), 0)
        XCTAssertEqual(try verify(pki.tsa, at: times.timeStamp), 0)
        let signer = try openssl(["x509", "-in", pki.signer, "-noout", "-text", "-nameopt", "utf8"]).stdout
        XCTAssertTrue(signer.contains("CN=JÕEORG,JAAK-KRISTJAN,38001085718"), signer)
        XCTAssertTrue(signer.contains("X509v3 Key Usage: critical\n                Non Repudiation"), signer)
        XCTAssertTrue(signer.contains("OCSP - URI:http://127.0.0.1:1/ocsp"), signer)
        XCTAssertTrue(try openssl(["x509", "-in", pki.tsa, "-noout", "-text"]).stdout
            .contains("X509v3 Extended Key Usage: critical\n                Time Stamping"))
        XCTAssertTrue(try openssl(["x509", "-in", pki.ocsp, "-noout", "-text"]).stdout.contains("OCSP No Check"))
        XCTAssertEqual(try openssl(["pkcs12", "-in", pki.signerP12, "-passin", "pass:\(TestPKI.passphrase)", "-nokeys"]).status, 0)
    }

    func testTheLoopbackServicesServeTheDatedPKI() throws {
        let times = TrustScenarioTimes()
        let pki = try TestPKI.makeDated(in: folder + "/pki", caNotBefore: times.caNotBefore, signerNotBefore: times.signerNotBefore)
        let services = try TestServices.start(pki: pki)
        defer { services.stop() }
        let ocsp = try openssl(["ocsp", "-issuer", pki.issuing, "-cert", pki.signer, "-url", services.ocspURL,
                                "-CAfile", pki.root, "-VAfile", pki.ocsp])
        XCTAssertTrue(ocsp.stdout.contains("\(pki.signer): good"), ocsp.stdout + ocsp.stderr)
        let stamped = try Shell.sh("""
            set -e; cd '\(folder)'; printf data > data
            openssl ts -query -data data -sha256 -cert -out q.tsq
            curl -sf -H 'Content-Type: application/timestamp-query' --data-binary @q.tsq '\(services.tsaURL)' -o r.tsr
            openssl ts -verify -queryfile q.tsq -in r.tsr -CAfile '\(pki.root)' -untrusted '\(pki.tsa)'
            """)
        XCTAssertTrue(stamped.stdout.contains("Verification: OK"), stamped.stdout + stamped.stderr)
    }

    func testAWrittenListVerifiesWithXmlsec1AndHoldsTheHistoriesAsked() throws {
        let times = TrustScenarioTimes()
        let pki = try TestPKI.makeDated(in: folder + "/pki", caNotBefore: times.caNotBefore, signerNotBefore: times.signerNotBefore)
        let path = try TrustScenarioLists(pki: pki, times: times).write(.caWithdrawnGrantedLater, in: folder)
        let verified = try Shell.run("xmlsec1", ["--verify", "--id-attr:Id", "SignedProperties", "--pubkey-cert-pem", pki.tlSigner, path])
        XCTAssertEqual(verified.status, 0, verified.stderr)
        XCTAssertTrue(verified.stderr.contains("SignedInfo References (ok/all): 2/2"), verified.stderr)
        XCTAssertNotEqual(try Shell.run("xmlsec1", ["--verify", "--id-attr:Id", "SignedProperties",
                                                    "--pubkey-cert-pem", pki.lotlSigner, path]).status, 0)
        // The CA service's statuses, newest first, as ElementTree reads them.
        let read = try Shell.python("""
            import sys, xml.etree.ElementTree as ET
            ns = {"t": "http://uri.etsi.org/02231/v2#"}
            root = ET.parse(sys.argv[1]).getroot()
            print(root.find("t:SchemeInformation/t:SchemeTerritory", ns).text)
            service = root.find("t:TrustServiceProviderList/t:TrustServiceProvider/t:TSPServices/t:TSPService", ns)
            for entry in [service.find("t:ServiceInformation", ns)] + service.findall("t:ServiceHistory/t:ServiceHistoryInstance", ns):
                print(entry.find("t:ServiceStatus", ns).text.rsplit("/", 1)[1], entry.find("t:StatusStartingTime", ns).text)
            """, [path])
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertEqual(read.stdout.split(separator: "\n").map(String.init), [
            "EE_T",
            "granted \(TestTime.string(times.switchover))",
            "undersupervision \(TestTime.string(times.dayAfterSigner))",
            "supervisionrevoked \(TestTime.string(times.dayBeforeSigner))",
            "undersupervision \(TestTime.string(times.firstListed))",
        ])
    }
}

import TestTools
import XCTest

/// The `.asicfs` control folder.
final class MountControlTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "fs-control") }
    override class func tearDown() { shared.stop() }

    func testControlFolderDescribesAnUnsignedContainer() throws {
        let fixture = try MountFixture(self)
        try fixture.mount(["create"])
        let m = fixture.mountpoint
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs").sorted(),
                       ["README", "container", "sign", "signatures", "status"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/status").sorted(),
                       ["current", "id-card", "last-error", "mobile-id", "smart-id", "smart-id.png"])
        let readme = try String(contentsOfFile: m + "/.asicfs/README", encoding: .utf8)
        XCTAssertTrue(readme.contains("last-error"), readme)
        var summary = try String(contentsOfFile: m + "/.asicfs/container", encoding: .utf8)
        XCTAssertTrue(summary.contains("format: ASiC-E\ndata files: 0\nsignatures: 0\nstate: unsigned"), summary)
        XCTAssertEqual(try String(contentsOfFile: m + "/.asicfs/status/current", encoding: .utf8), "idle\n")
        XCTAssertEqual(try String(contentsOfFile: m + "/.asicfs/status/last-error", encoding: .utf8), "")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures"), [])
        try writeFile(Array("x".utf8), m + "/x.txt")
        summary = try String(contentsOfFile: m + "/.asicfs/container", encoding: .utf8)
        XCTAssertTrue(summary.contains("data files: 1"), summary)
        // Read-only apart from what the interface makes writable.
        for command in ["echo x > '\(m)/.asicfs/README'", "rm '\(m)/.asicfs/container'", "mkdir '\(m)/.asicfs/new'",
                        "echo x > '\(m)/.asicfs/new-file'"] {
            XCTAssertNotEqual(try Shell.sh(command).status, 0, command)
        }
        try fixture.unmount()
        XCTAssertEqual(try containerContents(fixture.container).keys.sorted(), ["x.txt"])
    }

    func testSignaturesAreListedWithTheirSigner() throws {
        let fixture = try MountFixture(self)
        try MountFixture.makeSigned(fixture.container, Self.shared)
        // What the signature says of its times, read by asicfs verify from the same file.
        let verify = try Shell.run(MountFixture.binary, ["verify", fixture.container, "-o", "tsl=none"])
        let reported = { (label: String) in
            verify.stdout.split(separator: "\n").first { $0.hasPrefix("  \(label) ") }.map { $0.dropFirst(label.count + 2).trimmingCharacters(in: .whitespaces) } ?? "?"
        }
        // No trusted list (nothing to download): the signer's CA is then unknown.
        try fixture.mount(["tsl=none"])
        let signatures = fixture.path(".asicfs/signatures")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: signatures), ["0-\(SignedTestContainers.signer)"])
        let folder = signatures + "/0-\(SignedTestContainers.signer)"
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).sorted(),
                       ["certificate.pem", "method", "remove", "report", "signature.xml", "signer", "signing-time", "status"])
        let signer = try String(contentsOfFile: folder + "/signer", encoding: .utf8)
        XCTAssertTrue(signer.contains("name: \(SignedTestContainers.signer)"), signer)
        XCTAssertTrue(signer.contains("personal code: PNOEE-38001085718"), signer)
        XCTAssertTrue(signer.contains("country: EE"), signer)
        XCTAssertTrue(signer.contains("certificate issuer: \(SignedTestContainers.issuer)"), signer)
        let time = try String(contentsOfFile: folder + "/signing-time", encoding: .utf8)
        XCTAssertTrue(time.contains("claimed: \(reported("claimed time"))"), time + verify.stdout)
        XCTAssertTrue(time.contains("time-stamp: \(reported("time-stamp"))"), time + verify.stdout)
        // Validated in the background once first read: intact, but nothing vouches for its CA, TSA or OCSP responder.
        let status = try validatedText(folder + "/status")
        XCTAssertTrue(status.hasPrefix("INDETERMINATE\nindeterminate: the signer's certificate is not trusted"), status)
        XCTAssertFalse(status.contains("invalid:"), status)
        let report = try validatedText(folder + "/report")
        XCTAssertTrue(report.hasPrefix("Signature 0 (S0, META-INF/signatures0.xml): INDETERMINATE\n"), report)
        XCTAssertTrue(report.contains("signer           \(SignedTestContainers.signer)\n"), report)
        XCTAssertTrue(report.contains("signed files     test.txt\n"), report)
        XCTAssertEqual(try String(contentsOfFile: folder + "/method", encoding: .utf8), "unknown (not made in this mount)\n")
        let pem = try String(contentsOfFile: folder + "/certificate.pem", encoding: .utf8)
        let openssl = try Shell.sh("openssl x509 -noout -subject -nameopt utf8,sep_comma_plus < '\(folder)/certificate.pem'")
        XCTAssertTrue(pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
        XCTAssertTrue(openssl.stdout.contains("38001085718"), openssl.stdout + openssl.stderr)
        let xml = try readFile(folder + "/signature.xml")
        let inContainer = try Shell.sh("unzip -p '\(fixture.container)' META-INF/signatures0.xml | sha256sum; sha256sum < '\(folder)/signature.xml'")
        let sums = inContainer.stdout.split(separator: "\n").map { $0.prefix(64) }
        XCTAssertEqual(sums.count, 2)
        XCTAssertEqual(sums[0], sums[1])
        XCTAssertGreaterThan(xml.count, 1000)
        let summary = try String(contentsOfFile: fixture.path(".asicfs/container"), encoding: .utf8)
        XCTAssertTrue(summary.contains("signatures: 1\nstate: signed"), summary)
        try fixture.unmount()
    }
}

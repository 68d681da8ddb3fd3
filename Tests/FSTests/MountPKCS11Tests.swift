import Foundation
import TestTools
import XCTest

/// Signing with a PKCS#11 token through `.asicfs/sign/pkcs11`: the daemon has no terminal, so
/// pinentry (a fake one speaking Assuan, named by the `pinentry` setting) asks for the PIN.
final class MountPKCS11Tests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    static var services: TestServices? { shared.services }
    static var folder: String { shared.folder }

    override class func setUp() { shared = SharedTestServices(label: "fs-pkcs11") }
    override class func tearDown() { shared.stop() }

    static let pin = "735291"

    func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// A mounted container whose daemon sees one SoftHSM token holding the test signer, and
    /// whose pinentry answers `answer`.
    func mountWithToken(answer: String) throws -> (MountFixture, SoftHSMTokens, log: String) {
        let services = try XCTUnwrap(Self.services, "the loopback TSA/OCSP services and the test PKI")
        let fixture = try MountFixture(self)
        let tokens = try SoftHSMTokens(folder: fixture.folder + "/softhsm")
        try tokens.makeToken(label: "asicfs EC", pin: Self.pin,
                             identities: [.init(key: services.pki.path("signer.key"), certificate: services.pki.signer, id: "01", label: "signer")],
                             caCertificates: [services.pki.issuing])
        try writeFile(Array("to be signed\n".utf8), fixture.folder + "/a.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/a.txt"]).status, 0)
        let log = fixture.folder + "/pinentry.log"
        let pinentry = fixture.folder + "/fake-pinentry"
        try FakePinentry.write(to: pinentry, pin: answer, log: log)
        try fixture.mount(["tsl=none", "trust-anchors=\(services.pki.root)", "tsa-url=\(services.tsaURL)",
                           "cache-dir=\(Self.folder)/cache", "pinentry=\(pinentry)"],
                          environment: tokens.environment)
        return (fixture, tokens, log)
    }

    func testSigningWithATokenInAMountAsksThroughPinentry() throws {
        let (fixture, _, log) = try mountWithToken(answer: Self.pin)
        let m = fixture.mountpoint
        XCTAssertTrue(try text(m + "/.asicfs/sign/pkcs11").hasPrefix("pkcs11: [module=PATH] [label=TOKEN-LABEL]"))
        let started = try Shell.run("/bin/bash", ["-c", "echo 'label=\"asicfs EC\"' > '\(m)/.asicfs/sign/pkcs11'"])
        XCTAssertEqual(started.status, 0, started.stderr)
        let wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertEqual(wait.status, 0, wait.stderr)
        XCTAssertTrue(wait.stdout.hasPrefix("done: signed: JÕEORG,JAAK-KRISTJAN,38001085718 S0 in META-INF/signatures0.xml, VALID"),
                      wait.stdout)
        XCTAssertEqual(try text(m + "/.asicfs/signatures/0-JÕEORG,JAAK-KRISTJAN,38001085718/method"), "pkcs11\n")
        let received = try text(log)
        XCTAssertTrue(received.contains("SETDESC ") && received.contains("asicfs EC"), received)
        XCTAssertTrue(received.contains("PARENT-ENV "), received)
        XCTAssertFalse(received.contains(Self.pin), "the PIN is in no command line or environment: \(received)")
        try fixture.unmount()
    }

    func testAWrongPINInAMountFailsTheSigningAndLeavesTheContainerUnchanged() throws {
        let (fixture, tokens, _) = try mountWithToken(answer: "000000")
        let m = fixture.mountpoint
        let before = try readFile(fixture.container)
        let started = try Shell.run("/bin/bash", ["-c", "echo '' > '\(m)/.asicfs/sign/pkcs11'"])
        XCTAssertEqual(started.status, 0, started.stderr)
        let wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertNotEqual(wait.status, 0)
        XCTAssertTrue(wait.stdout.hasPrefix("failed: wrong PIN for the token \"asicfs EC\""), wait.stdout)
        XCTAssertTrue(try text(m + "/.asicfs/status/last-error").contains("wrong PIN"))
        try fixture.unmount()
        XCTAssertEqual(try readFile(fixture.container), before)
        XCTAssertTrue(try tokens.flags(of: "asicfs EC").contains("count low"))
    }
}

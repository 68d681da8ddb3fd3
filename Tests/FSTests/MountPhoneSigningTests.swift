import Foundation
import TestTools
import XCTest

/// Mobile-ID and Smart-ID through a real mount: the request written to `.asicfs/sign/…`, the
/// verification code in `status/<method>` (and a desktop notification) before the user confirms,
/// `status/wait`, one signing at a time, cancelling. The simulators run over pinned HTTPS on
/// loopback and sign with keys the test PKI certified; the TSA and OCSP are the loopback ones.
final class MountPhoneSigningTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    nonisolated(unsafe) static var mobileID: MobileIDSimulator?
    nonisolated(unsafe) static var smartID: SmartIDSimulator?

    override class func setUp() {
        shared = SharedTestServices(label: "fs-phone-signing")
        guard let pki = shared.services?.pki else { return }
        // The simulated user confirms after 1.5 s: long enough to read the code and to collide.
        mobileID = try? MobileIDSimulator.start(pki: pki, folder: shared.folder + "/mobile-id", confirmAfter: 1.5,
                                                userTimeout: 5)
        smartID = try? SmartIDSimulator.start(pki: pki, folder: shared.folder + "/smart-id", confirmAfter: 1.5)
    }

    override class func tearDown() {
        mobileID?.stop()
        smartID?.stop()
        shared.stop()
    }

    var services: TestServices { get throws { try XCTUnwrap(Self.shared.services, Self.shared.failure ?? "services") } }

    func settings() throws -> [String] {
        let mid = try XCTUnwrap(Self.mobileID, "the Mobile-ID simulator")
        let sid = try XCTUnwrap(Self.smartID, "the Smart-ID simulator")
        // The services send no chain: the issuing CA comes from the anchors (in real use, the trusted list).
        return ["tsa-url=\(try services.tsaURL)", "tsl=none", "trust-anchors=\(try services.pki.chain)",
                "mobile-id.url=\(mid.url)", "mobile-id.tls-cert=\(mid.tlsCertificate)",
                "smart-id.url=\(sid.url)", "smart-id.tls-cert=\(sid.tlsCertificate)"]
    }

    func mounted() throws -> MountFixture {
        let fixture = try MountFixture(self)
        try writeFile(Array("the contract\n".utf8), fixture.folder + "/contract.txt")
        let created = try Shell.run(MountFixture.binary, ["create", fixture.container, fixture.folder + "/contract.txt"])
        XCTAssertEqual(created.status, 0, created.stderr)
        try fixture.mount(try settings())
        return fixture
    }

    func write(_ fixture: MountFixture, _ method: String, _ text: String) throws -> Shell.Output {
        try Shell.run("/bin/bash", ["-c", "echo '\(text)' > '\(fixture.path(".asicfs/sign/" + method))'"])
    }

    func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// Polls `status/<method>` until the user is asked to confirm; returns the whole text.
    func codeShown(_ fixture: MountFixture, _ method: String) throws -> String {
        var status = ""
        for _ in 0..<100 {
            status = try text(fixture.path(".asicfs/status/" + method))
            // The code is shown first; the state says waiting-for-user once the request went out.
            if status.hasPrefix("waiting-for-user: ") && status.contains("verification code: ") { break }
            usleep(50_000)
        }
        return status
    }

    func code(in status: String) -> String? {
        status.split(separator: "\n").first { $0.hasPrefix("verification code: ") }.map { String($0.dropFirst(19)) }
    }

    func testMobileIDInAMountShowsTheCodeThenSigns() throws {
        // A desktop session with a notify-send that records what it was asked to show.
        let bin = Self.shared.folder + "/bin-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let notified = bin + "/notified"
        try writeFile(Array("#!/bin/sh\nprintf '%s\\n' \"$@\" >> '\(notified)'\n".utf8), bin + "/notify-send")
        chmod(bin + "/notify-send", 0o755)
        let savedPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        setenv("PATH", bin + ":" + savedPath, 1)
        setenv("DISPLAY", ":99", 1)
        defer {
            setenv("PATH", savedPath, 1)
            unsetenv("DISPLAY")
        }
        let fixture = try mounted()
        let m = fixture.mountpoint

        let started = try write(fixture, "mobile-id", "phone=+37200000766 idcode=60001019906 role=Buyer")
        XCTAssertEqual(started.status, 0, started.stderr)
        let status = try codeShown(fixture, "mobile-id")
        let shown = try XCTUnwrap(code(in: status), status)
        XCTAssertEqual(shown.count, 4)
        XCTAssertTrue(status.hasPrefix("waiting-for-user: confirm on the phone +37200000766"), status)
        XCTAssertTrue(try text(m + "/.asicfs/status/current").hasPrefix("waiting-for-user: "))

        // One signing at a time, whatever the method.
        let second = try write(fixture, "smart-id", "country=EE idcode=30303039914")
        XCTAssertTrue(second.stderr.contains("Device or resource busy"), second.stderr)

        let wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertEqual(wait.status, 0, wait.stderr)
        XCTAssertTrue(wait.stdout.hasPrefix("done: signed: O'CONNEŽ-ŠUSLIK TESTNUMBER,MARY ÄNN,60001019906 S0"), wait.stdout)
        XCTAssertTrue(wait.stdout.hasSuffix(", VALID\n"), wait.stdout)
        XCTAssertEqual(try text(m + "/.asicfs/status/mobile-id"), "idle\nno verification code\n")
        let folder = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures").first)
        XCTAssertEqual(try text(m + "/.asicfs/signatures/\(folder)/method"), "mobile-id\n")
        XCTAssertTrue(try text(m + "/.asicfs/signatures/\(folder)/status").hasPrefix("VALID\n"))
        XCTAssertTrue(try text(m + "/.asicfs/signatures/\(folder)/report").contains("roles            Buyer"))

        let notification = try text(notified)
        XCTAssertTrue(notification.contains("asicfs: Mobile-ID verification code \(shown)"), notification)
        try fixture.unmount()
    }

    func testSmartIDInAMountWithTheConfirmationScreen() throws {
        let fixture = try mounted()
        let m = fixture.mountpoint
        XCTAssertEqual(try write(fixture, "smart-id", "country=EE idcode=30303039914 display=confirmation").status, 0)
        let status = try codeShown(fixture, "smart-id")
        XCTAssertNotNil(code(in: status), status)
        let wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertEqual(wait.status, 0, wait.stderr)
        XCTAssertTrue(wait.stdout.hasPrefix("done: signed: ") && wait.stdout.hasSuffix(", VALID\n"), wait.stdout)
        let folder = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures").first)
        XCTAssertEqual(try text(m + "/.asicfs/signatures/\(folder)/method"), "smart-id\n")
        try fixture.unmount()
    }

    func testRefusalsAndCancellingLeaveTheContainerUnchanged() throws {
        let fixture = try mounted()
        let m = fixture.mountpoint
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.container))

        // The user cancels on the phone.
        XCTAssertEqual(try write(fixture, "mobile-id", "phone=+37201100266 idcode=60001019950").status, 0)
        var wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertNotEqual(wait.status, 0)
        XCTAssertEqual(wait.stdout, "failed: Mobile-ID: signing was cancelled on the phone\n")
        XCTAssertEqual(try text(m + "/.asicfs/status/last-error"),
                       "signing with mobile-id failed: Mobile-ID: signing was cancelled on the phone\n")

        // Smart-ID: the user refuses in the app.
        XCTAssertEqual(try write(fixture, "smart-id", "country=EE idcode=30403039917").status, 0)
        wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertNotEqual(wait.status, 0)
        XCTAssertTrue(wait.stdout.hasPrefix("failed: Smart-ID: "), wait.stdout)

        // Cancelled from the mount while the code is shown.
        XCTAssertEqual(try write(fixture, "mobile-id", "phone=+37200000766 idcode=60001019906").status, 0)
        XCTAssertNotNil(code(in: try codeShown(fixture, "mobile-id")))
        XCTAssertEqual(try write(fixture, "mobile-id", "cancel").status, 0)
        wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertEqual(wait.stdout, "failed: the signing was cancelled; the container is unchanged\n")

        // Bad input never reaches the service: EINVAL and the reason.
        let refused = try write(fixture, "mobile-id", "phone=+37200000766 idcode=60001019907")
        XCTAssertTrue(refused.stderr.contains("Invalid argument"), refused.stderr)
        XCTAssertTrue(try text(m + "/.asicfs/status/last-error").hasPrefix("mobile-id: "))

        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures"), [])
        try fixture.unmount()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: fixture.container)), before)
    }
}

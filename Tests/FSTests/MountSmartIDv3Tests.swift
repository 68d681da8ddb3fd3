import Foundation
import TestTools
import XCTest

/// Smart-ID RP API v3 through a real mount: `qr=yes` puts the device link in status/smart-id and
/// its QR code in status/smart-id.png, both renewed each second; the PNG, decoded by zbarimg, is
/// a link the simulator accepts as current; then the linked signature is made. Notification
/// signing shows the service's code. `cancel` stops a QR signing with the container unchanged.
final class MountSmartIDv3Tests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedSmartIDServices!

    override class func setUp() { shared = SharedSmartIDServices(label: "fs-smart-id-v3", confirmAfter: 0.3) }
    override class func tearDown() { shared.stop() }

    var simulator: SmartIDSimulator { get throws { try XCTUnwrap(Self.shared.simulator, Self.shared.failure ?? "simulator") } }

    func mounted(notify: Bool = false) throws -> MountFixture {
        let services = try XCTUnwrap(Self.shared.services, Self.shared.failure ?? "services")
        let fixture = try MountFixture(self)
        try writeFile(Array("the contract\n".utf8), fixture.folder + "/contract.txt")
        let created = try Shell.run(MountFixture.binary, ["create", fixture.container, fixture.folder + "/contract.txt"])
        XCTAssertEqual(created.status, 0, created.stderr)
        try fixture.mount(["tsa-url=\(services.tsaURL)", "tsl=none", "trust-anchors=\(services.pki.chain)", "notify=\(notify ? "yes" : "no")",
                           "smart-id.url=\(try simulator.urlV3)", "smart-id.tls-cert=\(try simulator.tlsCertificate)"])
        return fixture
    }

    func request(_ fixture: MountFixture, _ text: String) throws {
        let written = try Shell.run("/bin/bash", ["-c", "echo '\(text)' > '\(fixture.path(".asicfs/sign/smart-id"))'"])
        XCTAssertEqual(written.status, 0, written.stderr)
    }

    func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// The device link status/smart-id shows now (polled until there is one).
    func deviceLink(_ fixture: MountFixture, otherThan previous: String? = nil) throws -> String? {
        for _ in 0..<100 {
            let status = try text(fixture.path(".asicfs/status/smart-id"))
            if let line = status.split(separator: "\n").first(where: { $0.hasPrefix("device link: ") }) {
                let link = String(line.dropFirst("device link: ".count))
                if link != previous { return link }
            }
            usleep(50_000)
        }
        return nil
    }

    /// status/smart-id.png decoded by zbarimg.
    func decodedQR(_ fixture: MountFixture) throws -> String {
        let png = try Data(contentsOf: URL(fileURLWithPath: fixture.path(".asicfs/status/smart-id.png")))
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let file = fixture.folder + "/qr-\(UUID().uuidString.prefix(6)).png"
        try png.write(to: URL(fileURLWithPath: file))
        let decoded = try Shell.run("/usr/bin/zbarimg", ["--quiet", "--raw", file])
        XCTAssertEqual(decoded.status, 0, decoded.stderr)
        return decoded.stdout.trimmingCharacters(in: .newlines)
    }

    func field(_ name: String, _ link: String) throws -> String {
        let query = try XCTUnwrap(link.split(separator: "?", maxSplits: 1).last)
        return try XCTUnwrap(query.split(separator: "&").first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }, link)
    }
    func elapsed(_ link: String) throws -> Int { try XCTUnwrap(Int(try field("elapsedSeconds", link)), link) }
    func token(_ link: String) throws -> String { try field("sessionToken", link) }

    func testQRSigningShowsTheLinkAndARefreshedPNG() throws {
        let fixture = try mounted()
        let m = fixture.mountpoint
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/status").contains("smart-id.png"))
        try request(fixture, "qr=yes")
        let first = try XCTUnwrap(try deviceLink(fixture), "status/smart-id showed no device link")
        XCTAssertTrue(first.hasPrefix("https://smart-id.com/device-link?deviceLinkType=QR&elapsedSeconds="), first)
        let firstQR = try decodedQR(fixture)
        XCTAssertTrue(firstQR.hasPrefix("https://smart-id.com/device-link?deviceLinkType=QR&elapsedSeconds="), firstQR)
        // A second later: a new link, and the PNG holds it.
        XCTAssertNotNil(try deviceLink(fixture, otherThan: first))
        let current = try decodedQR(fixture)
        XCTAssertGreaterThan(try elapsed(current), try elapsed(firstQR))
        XCTAssertEqual(try token(current), try token(firstQR))
        // The session secret (the HMAC key) is in no status file.
        let issued = try XCTUnwrap(try simulator.requests().last { $0["sessionToken"] as? String == (try? token(current)) })
        let secret = try XCTUnwrap(issued["sessionSecret"] as? String).trimmingCharacters(in: ["="])
        for file in ["smart-id", "current", "last-error"] {
            XCTAssertFalse(try text(fixture.path(".asicfs/status/" + file)).contains(secret), file)
        }
        // What the PNG shows is what the phone scans: the simulator accepts it as current.
        XCTAssertNil(try simulator.scan(link: try decodedQR(fixture), document: "PNOEE-30303039914-MOCK-Q"))
        let wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertEqual(wait.status, 0, wait.stderr)
        XCTAssertTrue(wait.stdout.hasPrefix("done: signed: ") && wait.stdout.hasSuffix(", VALID\n"), wait.stdout)
        // Over: no link, no image.
        XCTAssertFalse(try text(fixture.path(".asicfs/status/smart-id")).contains("device link"))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: fixture.path(".asicfs/status/smart-id.png"))).count, 0)
        let folder = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures").first)
        XCTAssertTrue(try text(m + "/.asicfs/signatures/\(folder)/signature.xml").contains("sha256-rsa-MGF1"))
        try fixture.unmount()
    }

    func testNotificationSigningShowsTheServicesCode() throws {
        let fixture = try mounted()
        try request(fixture, "country=EE idcode=30303039914")
        var status = ""
        for _ in 0..<100 {
            status = try text(fixture.path(".asicfs/status/smart-id"))
            if status.contains("verification code: ") { break }
            usleep(50_000)
        }
        let signing = try XCTUnwrap(try simulator.requests().last { $0["flow"] as? String == "notification" })
        XCTAssertTrue(status.contains("verification code: \(try XCTUnwrap(signing["vc"] as? String))"), status)
        let wait = try Shell.run("/bin/cat", [fixture.mountpoint + "/.asicfs/status/wait"])
        XCTAssertTrue(wait.stdout.hasSuffix(", VALID\n"), wait.stdout)
        try fixture.unmount()
    }

    func testCancelStopsAQRSigning() throws {
        let fixture = try mounted()
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.container))
        try request(fixture, "qr=yes")
        XCTAssertNotNil(try deviceLink(fixture))
        try request(fixture, "cancel")
        let wait = try Shell.run("/bin/cat", [fixture.mountpoint + "/.asicfs/status/wait"])
        XCTAssertEqual(wait.stdout, "failed: the signing was cancelled; the container is unchanged\n")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: fixture.path(".asicfs/status/smart-id.png"))).count, 0)
        try fixture.unmount()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: fixture.container)), before)
    }

    /// Where a desktop session is present, a notification says where the QR code to scan is.
    func testTheDesktopNotificationSaysWhereTheQRCodeIs() throws {
        // A desktop session with a notify-send that records what it was asked to show.
        let desktop = try RecordingNotifySend(in: Self.shared.folder)
        defer { desktop.restore() }
        let notified = desktop.notified
        let fixture = try mounted(notify: true)
        try request(fixture, "qr=yes")
        XCTAssertNotNil(try deviceLink(fixture))
        var notification = ""
        for _ in 0..<100 where !notification.contains("smart-id.png") {
            notification = (try? text(notified)) ?? ""
            usleep(50_000)
        }
        XCTAssertTrue(notification.contains("asicfs: scan the Smart-ID QR code"), notification)
        XCTAssertTrue(notification.contains(".asicfs/status/smart-id.png of the mounted "), notification)
        try request(fixture, "cancel")
        _ = try Shell.run("/bin/cat", [fixture.mountpoint + "/.asicfs/status/wait"])
        try fixture.unmount()
    }
}

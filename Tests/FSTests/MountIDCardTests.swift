import Foundation
import TestTools
import XCTest

/// Signing with the ID-card in a mount: `.asicfs/sign/id-card`, PIN2 from pinentry (the daemon
/// runs it), `status/id-card` with the reader, the holder and the PIN counters; pcscd with the
/// virtual readers and the card emulator of contrib/card.
final class MountIDCardTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedCardReaders!
    static var readers: VirtualCardReaders? { shared.readers }
    static var setUpFailure: String? { shared.failure }

    override class func setUp() { shared = SharedCardReaders(label: "fs-idcard") }
    override class func tearDown() { shared.stop() }

    override func setUpWithError() throws {
        if let failure = Self.setUpFailure { throw MountError("the virtual card readers did not start: \(failure)") }
    }

    var services: TestServices { Self.shared.services.services! }
    var readers: VirtualCardReaders { Self.readers! }

    func mounted(pinentry: String) throws -> MountFixture {
        let fixture = try MountFixture(self)
        try writeFile(Array("the contract\n".utf8), fixture.folder + "/contract.txt")
        let created = try Shell.run(MountFixture.binary, ["create", fixture.container, fixture.folder + "/contract.txt"])
        XCTAssertEqual(created.status, 0, created.stderr)
        try fixture.mount(["tsl=none", "trust-anchors=\(services.pki.chain)", "tsa-url=\(services.tsaURL)",
                           "cache-dir=\(Self.shared.folder)/cache", "pinentry=\(pinentry)"])
        return fixture
    }

    func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    func request(_ fixture: MountFixture, _ line: String) throws -> Shell.Output {
        try Shell.run("/bin/bash", ["-c", "echo '\(line)' > '\(fixture.path(".asicfs/sign/id-card"))'"])
    }

    func wait(_ fixture: MountFixture) throws -> Shell.Output { try Shell.run("/bin/cat", [fixture.path(".asicfs/status/wait")]) }

    func testSigningInAMountAsksPinentryAndStatusShowsTheCard() throws {
        let state = Self.shared.folder + "/card-\(UUID().uuidString.prefix(6)).json"
        try readers.insert(VirtualCard(pki: services.pki.folder, state: state))
        defer { try? readers.remove() }
        let pinentryLog = Self.shared.folder + "/pinentry-\(UUID().uuidString.prefix(6)).log"
        let wrong = Self.shared.folder + "/wrong-pinentry"
        try FakePinentry.write(to: wrong, pin: "99999", log: pinentryLog)
        let fixture = try mounted(pinentry: wrong)
        let before = try readFile(fixture.container)

        XCTAssertEqual(try text(fixture.path(".asicfs/status/id-card")), """
            idle
            reader: Virtual PCD 00 00
            holder: JÕEORG, JAAK-KRISTJAN (38001085718)
            PIN1: 3 of 3 tries left
            PIN2: 3 of 3 tries left
            PUK: 3 of 3 tries left

            """)
        // A wrong PIN2 from pinentry: the signing fails, the counter shows it, nothing changed.
        XCTAssertEqual(try request(fixture, "").status, 0)
        let failed = try wait(fixture)
        XCTAssertTrue(failed.stdout.hasPrefix("failed: wrong PIN2, 2 tries left"), failed.stdout)
        XCTAssertTrue(try text(fixture.path(".asicfs/status/id-card")).contains("PIN2: 2 of 3 tries left\n"))
        XCTAssertEqual(try readFile(fixture.container), before)
        let transcript = try text(pinentryLog)
        XCTAssertTrue(transcript.contains("SETDESC Sign with the ID-card of JAAK-KRISTJAN JÕEORG (PNOEE-38001085718)"), transcript)
        XCTAssertTrue(transcript.contains("PARENT-ENV "), transcript)
        XCTAssertFalse(transcript.contains("99999"), "the PIN is in neither environment nor command line: \(transcript)")
        try fixture.unmount()

        let right = Self.shared.folder + "/right-pinentry"
        try FakePinentry.write(to: right, pin: "12345", log: pinentryLog)
        let again = try mounted(pinentry: right)
        XCTAssertEqual(try request(again, "reader=\"PCD 00 00\"").status, 0)
        let done = try wait(again)
        XCTAssertEqual(done.status, 0, done.stdout + done.stderr)
        XCTAssertTrue(done.stdout.hasPrefix("done: signed: JÕEORG,JAAK-KRISTJAN,38001085718 S0 in META-INF/signatures0.xml, VALID"), done.stdout)
        let status = try text(again.path(".asicfs/status/id-card"))
        XCTAssertTrue(status.hasPrefix("done: signed: JÕEORG"), status)
        XCTAssertTrue(status.contains("PIN2: 3 of 3 tries left\n"), status)
        XCTAssertEqual(try text(again.path(".asicfs/signatures/0-JÕEORG,JAAK-KRISTJAN,38001085718/method")), "id-card\n")
        try again.unmount()
        let verified = try Shell.run(MountFixture.binary, ["verify", again.container, "-o", "tsl=none",
                                                           "-o", "trust-anchors=\(services.pki.chain)"])
        XCTAssertEqual(verified.status, 0, verified.stdout + verified.stderr)
    }

    func testWithoutPinentryOrAPINPadTheMountSaysHowToAskForPIN2() throws {
        let state = Self.shared.folder + "/card-\(UUID().uuidString.prefix(6)).json"
        try readers.insert(VirtualCard(pki: services.pki.folder, state: state))
        defer { try? readers.remove() }
        let fixture = try mounted(pinentry: "none")
        let before = try readFile(fixture.container)
        XCTAssertEqual(try request(fixture, "").status, 0)
        let failed = try wait(fixture)
        XCTAssertEqual(failed.stdout, "failed: no way to ask for PIN2 in a mount: install pinentry (or set pinentry = PROGRAM), or use a reader with a PIN pad\n")
        XCTAssertEqual(try readFile(fixture.container), before)
        try readers.remove()
        let status = try text(fixture.path(".asicfs/status/id-card"))
        XCTAssertTrue(status.contains("no card information: insert the ID-card"), status)
    }
}

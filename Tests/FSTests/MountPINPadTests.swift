import Foundation
import TestTools
import XCTest

/// PIN2 on the reader's PIN pad (PC/SC part 10 FEATURE_VERIFY_PIN_DIRECT, the test driver of
/// contrib/card/pinpad): in a mount without pinentry, `status/id-card` says to type on the pad
/// while the reader waits; the PIN never reaches asicfs.
final class MountPINPadTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedCardReaders!
    static var readers: VirtualCardReaders? { shared.readers }
    static var setUpFailure: String? { shared.failure }

    override class func setUp() { shared = SharedCardReaders(label: "fs-pinpad", pinPad: true) }
    override class func tearDown() { shared.stop() }

    func testSigningOnThePINPadShowsWhatToDoAndCountsWrongPINs() throws {
        if let failure = Self.setUpFailure { throw MountError("the virtual PIN-pad readers did not start: \(failure)") }
        let services = try XCTUnwrap(Self.shared.services.services)
        let readers = try XCTUnwrap(Self.readers)
        let log = Self.shared.folder + "/apdu.log"
        try readers.insert(VirtualCard(pki: services.pki.folder, state: Self.shared.folder + "/card.json"), log: log)
        defer { try? readers.remove() }

        let fixture = try MountFixture(self)
        try writeFile(Array("the contract\n".utf8), fixture.folder + "/contract.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", fixture.container, fixture.folder + "/contract.txt"]).status, 0)
        try fixture.mount(["tsl=none", "trust-anchors=\(services.pki.chain)", "tsa-url=\(services.tsaURL)",
                           "cache-dir=\(Self.shared.folder)/cache", "pinentry=none"])
        let before = try readFile(fixture.container)
        let request = try Shell.run("/bin/bash", ["-c", "echo '' > '\(fixture.path(".asicfs/sign/id-card"))'"])
        XCTAssertEqual(request.status, 0, request.stderr)

        // The reader waits for the PIN: status says where to type it.
        var status = ""
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            status = try String(contentsOfFile: fixture.path(".asicfs/status/current"), encoding: .utf8)
            if status.hasPrefix("waiting-for-user") { break }
            usleep(50_000)
        }
        XCTAssertEqual(status, "waiting-for-user: enter PIN2 on the reader's PIN pad (Virtual PIN pad 00 00)\n")
        try readers.typeOnPINPad("99999")
        let failed = try Shell.run("/bin/cat", [fixture.path(".asicfs/status/wait")])
        XCTAssertEqual(failed.stdout, "failed: wrong PIN2, 2 tries left\n")
        XCTAssertEqual(try readFile(fixture.container), before)

        try readers.typeOnPINPad("cancel")
        XCTAssertEqual(try Shell.run("/bin/bash", ["-c", "echo '' > '\(fixture.path(".asicfs/sign/id-card"))'"]).status, 0)
        XCTAssertEqual(try Shell.run("/bin/cat", [fixture.path(".asicfs/status/wait")]).stdout,
                       "failed: PIN2 entry was cancelled; nothing was sent to the card\n")

        try readers.typeOnPINPad("12345")
        XCTAssertEqual(try Shell.run("/bin/bash", ["-c", "echo '' > '\(fixture.path(".asicfs/sign/id-card"))'"]).status, 0)
        let done = try Shell.run("/bin/cat", [fixture.path(".asicfs/status/wait")])
        XCTAssertTrue(done.stdout.hasPrefix("done: signed: JÕEORG,JAAK-KRISTJAN,38001085718 S0"), done.stdout)
        XCTAssertFalse(readers.pinPadInputPending)
        let apdus = try String(contentsOfFile: log, encoding: .utf8)
        XCTAssertEqual(apdus.split(separator: "\n").filter { $0.hasPrefix("> 00 20 00 85 Lc=0C") }.count, 2,
                       "two VERIFYs came from the pad (the cancelled entry sent none): \(apdus)")
    }
}

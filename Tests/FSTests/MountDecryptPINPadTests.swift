import Foundation
import TestTools
import XCTest

/// Decrypting a mounted encrypted container with PIN1 typed on the reader's PIN pad (PC/SC part
/// 10 FEATURE_VERIFY_PIN_DIRECT, the test driver of contrib/card/pinpad): without pinentry,
/// `status/current` and `status/id-card` say to type on the pad while the reader waits; a wrong
/// PIN1 and a cancelled entry are one line each, and the PIN never reaches asicfs.
final class MountDecryptPINPadTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedCardReaders!
    override class func setUp() { shared = SharedCardReaders(label: "fs-decrypt-pinpad", pinPad: true) }
    override class func tearDown() { shared.stop() }

    override func tearDownWithError() throws { try? Self.shared.readers?.remove(reader: 0) }

    func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    func request(_ fixture: MountFixture) throws {
        let written = try Shell.run("/bin/bash", ["-c", "echo '' > '\(fixture.path(".asicfs/decrypt/id-card"))'"])
        XCTAssertEqual(written.status, 0, written.stderr)
    }

    /// status/current once it starts with one of `prefixes` (or after `timeout`).
    func current(_ fixture: MountFixture, _ prefixes: [String], timeout: TimeInterval = 30) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let text = try text(fixture.path(".asicfs/status/current"))
            if prefixes.contains(where: text.hasPrefix) || Date() > deadline { return text }
            usleep(20_000)
        }
    }

    func testPIN1OnThePINPadShowsWhatToDoAndCountsWrongPINs() throws {
        if let failure = Self.shared.failure { throw MountError("the virtual PIN-pad readers did not start: \(failure)") }
        let readers = try XCTUnwrap(Self.shared.readers)
        let pki = try XCTUnwrap(Self.shared.services.services).pki.folder
        let fixture = try MountFixture(self)
        let apdus = fixture.folder + "/apdu.log"
        try readers.insert(VirtualCard(pki: pki, state: fixture.folder + "/card.json"), log: apdus)
        try writeFile(Array("salajane kiri\n".utf8), fixture.folder + "/kiri.txt")
        let container = fixture.folder + "/letter.cdoc2"
        let made = try Shell.run(MountFixture.binary, ["encrypt", container, fixture.folder + "/kiri.txt",
                                                       "--recipient", pki + "/card-auth.pem", "--format", "cdoc2"])
        XCTAssertEqual(made.status, 0, made.stderr)
        try fixture.mount(["pinentry=none"], container: container)

        // The reader waits for PIN1: status says where to type it.
        try request(fixture)
        let waiting = "waiting-for-user: enter PIN1 on the reader's PIN pad (Virtual PIN pad 00 00)\n"
        XCTAssertEqual(try current(fixture, ["waiting-for-user", "done:", "failed:"]), waiting)
        // The pad holds the card until the person types: status/id-card answers at once all the
        // same (it waited for the pad's 20 s time-out, and the PIN typed then was never taken).
        let asked = Date()
        XCTAssertEqual(try text(fixture.path(".asicfs/status/id-card")),
                       waiting + "card: in use by the decryption (the reader, the holder and the PIN counters show once it ends)\n")
        XCTAssertLessThan(Date().timeIntervalSince(asked), 5)
        try readers.typeOnPINPad("1111")
        let card = "the ID-card of JAAK-KRISTJAN JÕEORG (PNOEE-38001085718) in Virtual PIN pad 00 00"
        XCTAssertEqual(try current(fixture, ["done:", "failed:"]),
                       "failed: decrypting with id-card failed: \(card) cannot agree on a key: wrong PIN1, 2 tries left\n")

        try readers.typeOnPINPad("cancel")
        try request(fixture)
        let cancelled = try current(fixture, ["done:", "failed:"])
        XCTAssertTrue(cancelled.hasPrefix("failed: decrypting with id-card failed: ") && cancelled.hasSuffix(
            "PIN1 entry was cancelled; nothing was sent to the card\n"), cancelled)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.mountpoint), [".asicfs"])

        try readers.typeOnPINPad("1234")
        try request(fixture)
        XCTAssertEqual(try current(fixture, ["done:", "failed:"]), "done: decrypted 1 file with id-card\n")
        XCTAssertEqual(try text(fixture.path("kiri.txt")), "salajane kiri\n")
        XCTAssertTrue(try text(fixture.path(".asicfs/status/id-card")).contains("\nPIN1: 3 of 3 tries left\n"))
        XCTAssertFalse(readers.pinPadInputPending)
        XCTAssertEqual(cardCommands(apdus, ins: "20", p1p2: "00 01"), 2, "two VERIFYs came from the pad (the cancelled entry sent none)")
        XCTAssertEqual(cardCommands(apdus, ins: "2A", p1p2: "80 86"), 1)
        try fixture.unmount()
    }
}

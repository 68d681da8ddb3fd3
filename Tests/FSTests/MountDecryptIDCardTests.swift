import Foundation
import TestTools
import XCTest

/// Decrypting a mounted encrypted container with the ID-card: `.asicfs/decrypt/id-card`, PIN1
/// from pinentry run by the daemon (a fake one that logs its own and its parent's environment
/// and command line), `status/id-card` with the counters, contactless with the CAN, a cancelled
/// dialog, a card pulled at the key agreement, OpenSC's module on the same card through
/// `decrypt/pkcs11`, and `asicfs open` (the desktop's double-click). pcscd with the virtual
/// readers and the card emulator of contrib/card; the containers are written by `asicfs encrypt`
/// for the card's authentication certificate (the test PKI's).
final class MountDecryptIDCardTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedCardReaders!
    override class func setUp() { shared = SharedCardReaders(label: "fs-decrypt-idcard") }
    override class func tearDown() { shared.stop() }

    var readers: VirtualCardReaders { Self.shared.readers! }
    var pki: String { Self.shared.services.services!.pki.folder }
    /// PIN1 of the cards these tests make: one found nowhere else, so a leak is seen.
    static let pin1 = "80516273"
    /// How a failed key agreement names the card.
    static let cardName = "the ID-card of JAAK-KRISTJAN JÕEORG (PNOEE-38001085718) in Virtual PCD 00 00"
    static let openSC = "/usr/lib/x86_64-linux-gnu/opensc-pkcs11.so"

    override func setUpWithError() throws {
        if let failure = Self.shared.failure { throw MountError("the virtual card readers did not start: \(failure)") }
    }

    override func tearDownWithError() throws { try? readers.remove(reader: 0) }

    // MARK: - Helpers

    /// A card whose PIN1 is `pin1` (its counters in a state file of `fixture`'s folder).
    func card(_ fixture: MountFixture, _ configure: (inout VirtualCard) -> Void = { _ in }) throws -> VirtualCard {
        let state = fixture.folder + "/card-\(UUID().uuidString.prefix(6)).json"
        let pins = #"{"pins": {"pin1": {"value": "\#(Self.pin1)", "tries": 3, "max": 3, "changed": true}, "#
            + #""pin2": {"value": "12345", "tries": 3, "max": 3, "changed": true}, "#
            + #""puk": {"value": "17258403", "tries": 3, "max": 3, "changed": true}}}"#
        try Data(pins.utf8).write(to: URL(fileURLWithPath: state))
        var card = VirtualCard(pki: pki, state: state)
        configure(&card)
        return card
    }

    /// Two files and a container encrypted for the card's authentication certificate.
    func encrypted(_ fixture: MountFixture, format: String) throws -> (container: String, files: [String: [UInt8]]) {
        let plain = fixture.folder + "/plain-\(format)"
        try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: true)
        let files: [String: [UInt8]] = ["kiri.txt": Array("Tere, Jaak-Kristjan!\n".utf8),
                                        "leping.bin": (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }]
        for (name, bytes) in files { try writeFile(bytes, plain + "/" + name) }
        let container = fixture.folder + "/letter.\(format)"
        let made = try Shell.run(MountFixture.binary, ["encrypt", container] + files.keys.sorted().map { plain + "/" + $0 }
                                 + ["--recipient", pki + "/card-auth.pem", "--format", format])
        XCTAssertEqual(made.status, 0, made.stderr)
        try FileManager.default.removeItem(atPath: plain)
        return (container, files)
    }

    /// A fake pinentry at a path of `fixture`'s folder answering `pin` (nil: the person cancels).
    func pinentry(_ fixture: MountFixture, pin: String?) throws -> (program: String, log: String) {
        let program = fixture.folder + "/fake-pinentry", log = fixture.folder + "/pinentry.log"
        try FakePinentry.write(to: program, pin: pin, log: log)
        return (program, log)
    }

    func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// `echo LINE > .asicfs/decrypt/METHOD`, as a person or a script writes it.
    func request(_ fixture: MountFixture, _ method: String = "id-card", _ line: String = "") throws {
        let written = try Shell.run("/bin/bash", ["-c", "echo '\(line)' > '\(fixture.path(".asicfs/decrypt/\(method)"))'"])
        XCTAssertEqual(written.status, 0, written.stderr)
    }

    /// status/current once the decryption has ended ("done: …" or "failed: …").
    func outcome(_ fixture: MountFixture, timeout: TimeInterval = 60) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let text = try text(fixture.path(".asicfs/status/current"))
            if text.hasPrefix("done:") || text.hasPrefix("failed:") || Date() > deadline { return text }
            usleep(20_000)
        }
    }

    /// What the mount shows besides `.asicfs`.
    func shown(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0 != ".asicfs" }.sorted()
    }

    func assertShown(_ folder: String, _ files: [String: [UInt8]], file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try shown(folder), files.keys.sorted(), file: file, line: line)
        for (name, bytes) in files {
            XCTAssertEqual(try readFile(folder + "/" + name), bytes, name, file: file, line: line)
            let mode = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.posixPermissions] as? Int)
            XCTAssertEqual(mode, 0o444, name, file: file, line: line)
        }
    }

    // MARK: - Contact, pinentry

    /// IDEMIA, contact, both formats: pinentry asks PIN1 naming the holder; the card does one
    /// VERIFY and one key agreement; the files appear read-only and byte-exact; status/id-card
    /// shows the card; PIN1 is in no command line, environment, status file or daemon output.
    func testIDEMIADecryptsCDOC2AndCDOC11WithPIN1FromPinentry() throws {
        for format in ["cdoc2", "cdoc"] {
            let fixture = try MountFixture(self)
            let (container, files) = try encrypted(fixture, format: format)
            let apdus = fixture.folder + "/apdu.log"
            try readers.insert(try card(fixture), reader: 0, log: apdus)
            let (program, log) = try pinentry(fixture, pin: Self.pin1)
            try fixture.mount(["pinentry=\(program)"], container: container)
            XCTAssertEqual(try text(fixture.path(".asicfs/status/id-card")), """
                idle
                reader: Virtual PCD 00 00
                holder: JÕEORG, JAAK-KRISTJAN (38001085718)
                PIN1: 3 of 3 tries left
                PIN2: 3 of 3 tries left
                PUK: 3 of 3 tries left

                """)

            // The request file says what a mount takes: no pin-fd= (refused there), who asks.
            XCTAssertEqual(try text(fixture.path(".asicfs/decrypt/id-card")), """
                id-card [reader=NAME] [can=DIGITS]: the ID-card's authentication key (PIN1)
                PIN1 is asked by pinentry (the pinentry setting), else typed on the reader's PIN pad
                example: echo "" > .asicfs/decrypt/id-card

                """)
            try request(fixture)
            XCTAssertEqual(try outcome(fixture), "done: decrypted 2 files with id-card\n", format)
            try assertShown(fixture.mountpoint, files)
            XCTAssertTrue(try text(fixture.path(".asicfs/status/id-card")).hasPrefix("done: decrypted 2 files with id-card\nreader: "))
            XCTAssertEqual(cardCommands(apdus, ins: "20", p1p2: "00 01"), 1, format)
            XCTAssertEqual(cardCommands(apdus, ins: "2A", p1p2: "80 86"), 1, format)

            let transcript = try text(log)
            XCTAssertTrue(transcript.contains("SETDESC Decrypt with the ID-card of JAAK-KRISTJAN JÕEORG (PNOEE-38001085718)"), transcript)
            XCTAssertTrue(transcript.contains("PARENT-ENV ") && transcript.contains("PARENT-ARGV "), transcript)
            XCTAssertFalse(transcript.contains(Self.pin1), "PIN1 is in neither environment nor command line: \(transcript)")
            for status in ["current", "id-card", "last-error", "recipients"] {
                XCTAssertFalse(try text(fixture.path(".asicfs/status/" + status)).contains(Self.pin1), status)
            }
            try fixture.unmount()
            XCTAssertFalse(fixture.stderrText.contains(Self.pin1))
            try readers.remove(reader: 0)
        }
    }

    /// A wrong PIN1: one line in status/current and last-error with the counter, which
    /// status/id-card shows dropped; nothing shown. The same mount then decrypts with the right
    /// PIN1 (and the counter is back at 3).
    func testAWrongPIN1ShowsNothingAndTheMountStillDecryptsWithTheRightOne() throws {
        let fixture = try MountFixture(self)
        let (container, files) = try encrypted(fixture, format: "cdoc2")
        try readers.insert(try card(fixture), reader: 0)
        let (program, _) = try pinentry(fixture, pin: "11112222")
        try fixture.mount(["pinentry=\(program)"], container: container)

        try request(fixture)
        let wrong = "decrypting with id-card failed: \(Self.cardName) cannot agree on a key: wrong PIN1, 2 tries left\n"
        XCTAssertEqual(try outcome(fixture), "failed: " + wrong)
        XCTAssertEqual(try text(fixture.path(".asicfs/status/last-error")), wrong)
        XCTAssertTrue(try text(fixture.path(".asicfs/status/id-card")).contains("\nPIN1: 2 of 3 tries left\n"))
        XCTAssertEqual(try shown(fixture.mountpoint), [])

        _ = try pinentry(fixture, pin: Self.pin1)
        try request(fixture)
        XCTAssertEqual(try outcome(fixture), "done: decrypted 2 files with id-card\n")
        try assertShown(fixture.mountpoint, files)
        XCTAssertTrue(try text(fixture.path(".asicfs/status/id-card")).contains("\nPIN1: 3 of 3 tries left\n"))
        try fixture.unmount()
    }

    /// The Thales card (its own MSE:SET and key agreement) decrypts a CDOC 1.1 and a CDOC2.
    func testThalesCardDecryptsBothFormats() throws {
        for format in ["cdoc", "cdoc2"] {
            let fixture = try MountFixture(self)
            let (container, files) = try encrypted(fixture, format: format)
            try readers.insert(try card(fixture) { $0.kind = .thales }, reader: 0)
            let (program, _) = try pinentry(fixture, pin: Self.pin1)
            try fixture.mount(["pinentry=\(program)"], container: container)
            try request(fixture)
            XCTAssertEqual(try outcome(fixture), "done: decrypted 2 files with id-card\n", format)
            try assertShown(fixture.mountpoint, files)
            try fixture.unmount()
            try readers.remove(reader: 0)
        }
    }

    /// Contactless: the request carries the CAN (can=, as sign/id-card takes it); without it the
    /// decryption fails saying so.
    func testContactlessTakesTheCANFromTheRequest() throws {
        let fixture = try MountFixture(self)
        let (container, files) = try encrypted(fixture, format: "cdoc2")
        try readers.insert(try card(fixture) { $0.can = "123456" }, reader: 0)
        let (program, _) = try pinentry(fixture, pin: Self.pin1)
        try fixture.mount(["pinentry=\(program)"], container: container)
        try request(fixture)
        let refused = try outcome(fixture)
        XCTAssertTrue(refused.hasPrefix("failed: ") && refused.contains("can=DIGITS"), refused)
        XCTAssertEqual(try shown(fixture.mountpoint), [])
        try request(fixture, "id-card", "can=123456")
        XCTAssertEqual(try outcome(fixture), "done: decrypted 2 files with id-card\n")
        try assertShown(fixture.mountpoint, files)
        try fixture.unmount()
    }

    /// Browse mode: an encrypted container's folder has its own `.asicfs`, whose
    /// `decrypt/id-card` decrypts it the same way (pinentry run by the browse daemon).
    func testBrowseModeDecryptsAContainerFolderWithTheCard() throws {
        let browse = try BrowseFixture(self)
        let (container, files) = try encrypted(browse.mount, format: "cdoc")
        XCTAssertEqual(rename(container, browse.real("letter.cdoc")), 0)
        try readers.insert(try card(browse.mount), reader: 0)
        let (program, _) = try pinentry(browse.mount, pin: Self.pin1)
        try browse.start(["pinentry=\(program)"])
        XCTAssertEqual(try shown(browse.path("letter.cdoc")), [])
        let written = try Shell.run("/bin/bash", ["-c", "echo '' > '\(browse.path("letter.cdoc/.asicfs/decrypt/id-card"))'"])
        XCTAssertEqual(written.status, 0, written.stderr)
        let deadline = Date().addingTimeInterval(60)
        var current = ""
        repeat {
            current = try text(browse.path("letter.cdoc/.asicfs/status/current"))
            if current.hasPrefix("done:") || current.hasPrefix("failed:") { break }
            usleep(20_000)
        } while Date() < deadline
        XCTAssertEqual(current, "done: decrypted 2 files with id-card\n")
        try assertShown(browse.path("letter.cdoc"), files)
    }

    // MARK: - Cancel, a card pulled

    /// Cancelling pinentry's dialog, and a card that leaves the reader when the key agreement
    /// (PSO, INS 2A) reaches it — the emulator's deterministic window: each is one line in
    /// last-error, nothing is shown, and the daemon goes on to decrypt afterwards.
    func testACancelledDialogAndACardPulledMidwayLeaveNothingAndTheMountGoesOn() throws {
        let fixture = try MountFixture(self)
        let (container, files) = try encrypted(fixture, format: "cdoc2")
        let apdus = fixture.folder + "/apdu.log"
        try readers.insert(try card(fixture), reader: 0, log: apdus)
        let (program, _) = try pinentry(fixture, pin: nil)
        try fixture.mount(["pinentry=\(program)"], container: container)

        try request(fixture)
        let cancelled = try outcome(fixture)
        XCTAssertTrue(cancelled.hasPrefix("failed: decrypting with id-card failed: ") && cancelled.contains("cancel"), cancelled)
        let lastError = try text(fixture.path(".asicfs/status/last-error"))
        XCTAssertEqual(lastError.split(separator: "\n").count, 1, lastError)
        XCTAssertEqual(try shown(fixture.mountpoint), [])
        XCTAssertEqual(cardCommands(apdus, ins: "20", p1p2: "00 01"), 0, "a cancelled dialog sends no VERIFY")

        try readers.remove(reader: 0)
        try readers.insert(try card(fixture) { $0.pullOn = "2A" }, reader: 0)
        _ = try pinentry(fixture, pin: Self.pin1)
        try request(fixture)
        let removed = "decrypting with id-card failed: \(Self.cardName) cannot agree on a key: the card was removed; nothing was "
            + "decrypted (insert it and try again)\n"
        XCTAssertEqual(try outcome(fixture), "failed: " + removed)
        XCTAssertEqual(try text(fixture.path(".asicfs/status/last-error")), removed)
        XCTAssertEqual(try shown(fixture.mountpoint), [])
        XCTAssertNil(fixture.reap(timeout: 0.1), "the daemon is alive")

        try readers.remove(reader: 0)
        try readers.insert(try card(fixture), reader: 0)
        try request(fixture)
        XCTAssertEqual(try outcome(fixture), "done: decrypted 2 files with id-card\n")
        try assertShown(fixture.mountpoint, files)
        try fixture.unmount()
    }

    /// Unmounting while pinentry's dialog asks PIN1 (held open by the fake pinentry's gate):
    /// status says what the daemon waits for and status/id-card answers at once; `asicfs umount`
    /// ends the mount within seconds, nothing is sent to the card, no spool is left, and the
    /// pinentry the daemon started does not outlive it.
    func testUnmountWhilePinentryAsksEndsCleanly() throws {
        let fixture = try MountFixture(self)
        let (container, _) = try encrypted(fixture, format: "cdoc2")
        let apdus = fixture.folder + "/apdu.log"
        try readers.insert(try card(fixture), reader: 0, log: apdus)
        let hold = fixture.folder + "/dialog-open"
        try writeFile([], hold)
        defer { unlink(hold) }
        let program = fixture.folder + "/fake-pinentry"
        try FakePinentry.write(to: program, pin: Self.pin1, log: fixture.folder + "/pinentry.log", holdWhile: hold)
        try fixture.mount(["pinentry=\(program)"], container: container)
        try request(fixture)
        XCTAssertTrue(eventually(15) { FileManager.default.fileExists(atPath: hold + ".held") }, "pinentry was not asked")
        XCTAssertEqual(try text(fixture.path(".asicfs/status/current")),
                       "waiting-for-user: enter PIN1 for the ID-card in Virtual PCD 00 00 (asked by \(program))\n")
        XCTAssertTrue(try text(fixture.path(".asicfs/status/id-card")).hasSuffix(
            "\ncard: in use by the decryption (the reader, the holder and the PIN counters show once it ends)\n"))
        XCTAssertFalse(try Shell.run("/usr/bin/pgrep", ["-f", program]).stdout.isEmpty, "the dialog is open")

        let started = Date()
        let unmounted = try Shell.run(MountFixture.binary, ["umount", fixture.mountpoint])
        XCTAssertEqual(unmounted.status, 0, unmounted.stderr)
        XCTAssertNotNil(fixture.reap(timeout: 15), "the daemon ended")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertEqual(((try? FileManager.default.contentsOfDirectory(atPath: fixture.folder)) ?? []).filter { $0.contains(".asicfs-spool-") }, [])
        XCTAssertEqual(cardCommands(apdus, ins: "20", p1p2: "00 01"), 0, "no PIN was sent")
        XCTAssertTrue(eventually(5) { (try? Shell.run("/usr/bin/pgrep", ["-f", program]))?.stdout.isEmpty ?? false },
                      "the daemon's pinentry is gone with it")
    }

    // MARK: - OpenSC's PKCS#11 module on the card

    /// `decrypt/pkcs11` with OpenSC's module over the emulated IDEMIA card: C_DeriveKey with
    /// CKM_ECDH1_DERIVE reaches the card as the same MSE:SET + PSO:DECIPHER; pinentry asks the PIN.
    func testOpenSCModuleOnTheIDEMIACardDecryptsThroughDecryptPKCS11() throws {
        let fixture = try MountFixture(self)
        let (container, files) = try encrypted(fixture, format: "cdoc2")
        let apdus = fixture.folder + "/apdu.log"
        try readers.insert(try card(fixture), reader: 0, log: apdus)
        let (program, log) = try pinentry(fixture, pin: Self.pin1)
        try fixture.mount(["pinentry=\(program)"], container: container)
        try request(fixture, "pkcs11", "module=\(Self.openSC)")
        XCTAssertEqual(try outcome(fixture), "done: decrypted 2 files with pkcs11\n")
        try assertShown(fixture.mountpoint, files)
        XCTAssertEqual(cardCommands(apdus, ins: "2A", p1p2: "80 86"), 1)
        XCTAssertFalse(try text(log).contains(Self.pin1))
        try fixture.unmount()
    }

    // MARK: - asicfs open

    /// The desktop's double-click on a .cdoc2 with the card inserted: open mounts, the daemon
    /// asks PIN1 through pinentry, the folder opens with the files; `asicfs close` ends it. A
    /// wrong PIN1 is a failed open: one line, a notification, nothing left mounted.
    func testOpenDecryptsWithTheInsertedCardAndCloseEndsIt() throws {
        let fixture = try MountFixture(self)
        let desktop = try OpenCommandTests.Desktop(fixture.folder + "/desktop")
        addTeardownBlock {
            for name in desktop.openFolders() where (try? Shell.run(MountFixture.binary, ["umount", desktop.runtime + "/asicfs/" + name]))?.status != 0 {
                _ = try? Shell.run("fusermount3", ["-u", "-z", desktop.runtime + "/asicfs/" + name])
            }
        }
        let (container, files) = try encrypted(fixture, format: "cdoc2")
        try readers.insert(try card(fixture), reader: 0)

        let (program, _) = try pinentry(fixture, pin: "11112222")
        let refused = try desktop.run(["open", container, "-o", "pinentry=\(program)"])
        XCTAssertEqual(refused.status, 1, refused.stdout)
        XCTAssertTrue(refused.stderr.hasSuffix("asicfs: cannot decrypt letter.cdoc2 with the ID-card: \(Self.cardName) cannot agree on a key: "
                                                    + "wrong PIN1, 2 tries left\n"),
                      refused.stderr)
        XCTAssertTrue(eventually { desktop.notified().contains("cannot open letter.cdoc2") }, desktop.notified())
        XCTAssertEqual(desktop.openFolders(), [], "a failed open leaves nothing mounted")

        _ = try pinentry(fixture, pin: Self.pin1)
        let opened = try desktop.run(["open", container, "-o", "pinentry=\(program)"])
        XCTAssertEqual(opened.status, 0, opened.stderr)
        let folder = desktop.runtime + "/asicfs/letter.cdoc2"
        XCTAssertEqual(opened.stdout, folder + "\n")
        try assertShown(folder, files)
        XCTAssertTrue(eventually { (try? String(contentsOfFile: desktop.folder + "/bin/xdg-open.log", encoding: .utf8)) == folder + "\n" })
        let closed = try desktop.run(["close", container])
        XCTAssertEqual(closed.status, 0, closed.stderr)
        XCTAssertEqual(desktop.openFolders(), [])
    }
}

/// How many commands with `ins` (and `p1p2`) the emulated card received (its log: "> CLA INS P1 P2 …").
func cardCommands(_ log: String, ins: String, p1p2: String) -> Int {
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").filter { line in
        let fields = line.split(separator: " ")
        return line.hasPrefix(">") && fields.count > 4 && fields[2] == Substring(ins) && "\(fields[3]) \(fields[4])" == p1p2
    }.count
}

import CDOC
import Crypto
import Foundation
import Signing
import TestTools
import XCTest

/// PIN1 typed on the reader's PIN pad (contrib/card/pinpad): as in a mount without pinentry,
/// the key says where to type, and the PIN never reaches asicfs.
final class PINPadRecipientKeyTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedCardReaders!
    override class func setUp() { shared = SharedCardReaders(label: "keys-pinpad", pinPad: true) }
    override class func tearDown() { shared.stop() }

    func testPIN1OnThePINPad() throws {
        if let failure = Self.shared.failure { throw ShellError("the virtual PIN-pad readers did not start: \(failure)") }
        let readers = try XCTUnwrap(Self.shared.readers)
        let pki = try XCTUnwrap(Self.shared.services.services).pki.folder
        let log = Self.shared.folder + "/apdu.log"
        try readers.insert(VirtualCard(pki: pki, state: Self.shared.folder + "/card.json"), log: log)
        defer { try? readers.remove() }
        let events = EventLog()
        let key = try IDCardRecipientKey(parameters: SigningParameters(), configuration: try RecipientKeyTesting.configuration(),
                                         commandLine: false, events: { events.record($0) })
        let sender = try RecipientKeyTesting.ephemeral(.p384)

        try readers.typeOnPINPad("9999")
        XCTAssertThrowsError(try key.agree(with: sender.publicKey)) { error in
            XCTAssertEqual("\(error)", "wrong PIN1, 2 tries left")
        }
        try readers.typeOnPINPad("cancel")
        XCTAssertThrowsError(try key.agree(with: sender.publicKey)) { error in
            XCTAssertEqual("\(error)", "PIN1 entry was cancelled; nothing was sent to the card")
        }
        try readers.typeOnPINPad("1234")
        let z = RecipientKeyTesting.bytes(try key.agree(with: sender.publicKey))
        XCTAssertEqual(z, RecipientKeyTesting.bytes(try RecipientKeyTesting.privateKey(pki + "/card-auth.key").agree(with: sender.publicKey)))
        XCTAssertFalse(readers.pinPadInputPending)
        XCTAssertTrue(events.texts.contains("enter PIN1 on the reader's PIN pad (Virtual PIN pad 00 00)"), "\(events.texts)")
        XCTAssertEqual(cardCommands(log, ins: "20", p1p2: "00 01"), 2, "two VERIFYs came from the pad (the cancelled entry sent none)")
        XCTAssertEqual(cardCommands(log, ins: "2A", p1p2: "80 86"), 1)
    }

    /// OpenSC over the PIN-pad reader: the token has a protected authentication path, the key
    /// says to type on the reader, and C_Login's VERIFY comes from the pad.
    func testOpenSCWithThePINPad() throws {
        if let failure = Self.shared.failure { throw ShellError("the virtual PIN-pad readers did not start: \(failure)") }
        let readers = try XCTUnwrap(Self.shared.readers)
        let pki = try XCTUnwrap(Self.shared.services.services).pki.folder
        let log = Self.shared.folder + "/apdu-opensc.log"
        try readers.insert(VirtualCard(pki: pki, state: Self.shared.folder + "/card-opensc.json"), log: log)
        defer { try? readers.remove() }
        let events = EventLog()
        let key = try PKCS11RecipientKey(parameters: SigningParameters(["module": "/usr/lib/x86_64-linux-gnu/opensc-pkcs11.so"]),
                                         configuration: try RecipientKeyTesting.configuration(), commandLine: false,
                                         events: { events.record($0) })
        let sender = try RecipientKeyTesting.ephemeral(.p384)
        try readers.typeOnPINPad("1234")
        let z = RecipientKeyTesting.bytes(try key.agree(with: sender.publicKey))
        XCTAssertEqual(z, RecipientKeyTesting.bytes(try RecipientKeyTesting.privateKey(pki + "/card-auth.key").agree(with: sender.publicKey)))
        XCTAssertFalse(readers.pinPadInputPending)
        XCTAssertTrue(events.texts.contains("enter the PIN on the reader"), "\(events.texts)")
        XCTAssertEqual(cardCommands(log, ins: "2A", p1p2: "80 86"), 1)
    }
}

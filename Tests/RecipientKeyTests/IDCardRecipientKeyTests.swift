import CDOC
import Crypto
import Foundation
import Signing
import TestTools
import XCTest

/// The ID-card as the recipient's key: pcscd with vpcd's virtual readers and the card emulator
/// of contrib/card (IDEMIA T=1 and T=0, Thales, contactless with PACE), whose authentication key
/// the test PKI made, so the card's Z can be checked against OpenSSL's ECDH with the same key.
final class IDCardRecipientKeyTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedCardReaders!
    override class func setUp() { shared = SharedCardReaders(label: "keys-idcard") }
    override class func tearDown() { shared.stop() }

    var readers: VirtualCardReaders { Self.shared.readers! }
    var pki: String { Self.shared.services.services!.pki.folder }
    var folder: String!
    var log: String { folder + "/apdu.log" }

    override func setUpWithError() throws {
        if let failure = Self.shared.failure { throw ShellError("the virtual card readers did not start: \(failure)") }
        folder = Self.shared.folder + "/\(name.filter { $0.isLetter || $0.isNumber })"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? readers.remove(reader: 0)
    }

    func card(_ configure: (inout VirtualCard) -> Void = { _ in }) -> VirtualCard {
        var card = VirtualCard(pki: pki, state: folder + "/card-\(UUID().uuidString.prefix(6)).json")
        configure(&card)
        return card
    }

    func key(pin: String?, _ extra: [String: String] = [:], events: EventLog = EventLog()) throws -> IDCardRecipientKey {
        var values = extra
        if let pin { values["pin-fd"] = "\(try RecipientKeyTesting.pinDescriptor(pin, in: folder))" }
        return try IDCardRecipientKey(parameters: SigningParameters(values), configuration: try RecipientKeyTesting.configuration(),
                                      events: { events.record($0) })
    }

    /// The card's Z equals OpenSSL's ECDH of the sender's key with the card's private key (the
    /// test PKI's file), and the sender's own ECDH with the card's certificate key.
    func assertAgreement(_ key: IDCardRecipientKey, authKey: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let sender = try RecipientKeyTesting.ephemeral(.p384)
        let z = RecipientKeyTesting.bytes(try key.agree(with: sender.publicKey))
        XCTAssertEqual(z.count, 48, file: file, line: line)
        XCTAssertEqual(z, RecipientKeyTesting.bytes(try RecipientKeyTesting.privateKey(authKey).agree(with: sender.publicKey)),
                       file: file, line: line)
        XCTAssertEqual(z, RecipientKeyTesting.bytes(try sender.agree(with: key.publicKey)), file: file, line: line)
    }

    func testIDEMIAContactAgreesWithTheAuthenticationKey() throws {
        for t0 in [false, true] {
            try readers.insert(card { $0.t0 = t0 }, reader: 0, log: log)
            let events = EventLog()
            let key = try key(pin: "1234", events: events)
            XCTAssertEqual(key.certificate?.der, try RecipientKeyTesting.certificateDER(pki + "/card-auth.pem"))
            XCTAssertEqual(key.publicKey.curve, .p384)
            XCTAssertEqual(key.name, "the ID-card of JAAK-KRISTJAN JÕEORG (PNOEE-38001085718) in Virtual PCD 00 00")
            try assertAgreement(key, authKey: pki + "/card-auth.key")
            // One VERIFY of PIN1 (reference 01), one MSE:SET B8 and one PSO:DECIPHER 80 86.
            XCTAssertEqual(cardCommands(log, ins: "20", p1p2: "00 01"), 1)
            XCTAssertEqual(cardCommands(log, ins: "22", p1p2: "41 B8"), 1)
            XCTAssertEqual(cardCommands(log, ins: "2A", p1p2: "80 86"), 1)
            XCTAssertTrue(events.texts.contains { $0.hasPrefix("enter PIN1 for the ID-card in Virtual PCD 00 00 (read from descriptor ") },
                          "\(events.texts)")
            // The PIN is in no event and in the card's log only as a VERIFY header.
            XCTAssertFalse(events.texts.joined().contains("1234"))
            let apdus = try String(contentsOfFile: log, encoding: .utf8)
            XCTAssertFalse(apdus.contains("31 32 33 34") || apdus.contains("31323334"), apdus)
            try readers.remove(reader: 0)
            try? FileManager.default.removeItem(atPath: log)
        }
    }

    func testThalesContactAgreesWithTheAuthenticationKey() throws {
        try readers.insert(card {
            $0.kind = .thales
            $0.authCertificate = pki + "/card-auth2.pem"; $0.authKey = pki + "/card-auth2.key"
        }, reader: 0, log: log)
        let key = try key(pin: "1234")
        XCTAssertEqual(key.certificate?.der, try RecipientKeyTesting.certificateDER(pki + "/card-auth2.pem"))
        try assertAgreement(key, authKey: pki + "/card-auth2.key")
        XCTAssertEqual(cardCommands(log, ins: "20", p1p2: "00 81"), 1)
        XCTAssertEqual(cardCommands(log, ins: "22", p1p2: "41 B8"), 1)
        XCTAssertEqual(cardCommands(log, ins: "2A", p1p2: "80 86"), 1)
    }

    /// Also the Thales card's certificate over secure messaging: 256-byte reads wrapped past
    /// what a short response holds (PC/SC's "insufficient buffer") until reads were cut to 0xDF.
    func testContactlessWithTheCANOnBothCards() throws {
        for kind in [VirtualCard.Kind.idemia, .thales] {
            try readers.insert(card { $0.kind = kind; $0.can = "123456" }, reader: 0)
            XCTAssertThrowsError(try key(pin: "1234")) { error in
                XCTAssertEqual("\(error)", "the card in Virtual PCD 00 00 is contactless: give can=DIGITS, the card access number (CAN) printed on its front")
            }
            let key = try key(pin: "1234", ["can": "123456"])
            try assertAgreement(key, authKey: pki + "/card-auth.key")
            try readers.remove(reader: 0)
        }
    }

    func testWrongPINCountsDownThenBlockedIsSaidBeforeAsking() throws {
        try readers.insert(card(), reader: 0, log: log)
        let sender = try RecipientKeyTesting.ephemeral(.p384)
        for left in [2, 1, 0] {
            XCTAssertThrowsError(try key(pin: "0000").agree(with: sender.publicKey)) { error in
                XCTAssertEqual("\(error)", left == 0 ? "PIN1 is blocked; unblock it with the PUK (asicfs card unblock pin1)"
                                                     : "wrong PIN1, \(left) tr\(left == 1 ? "y" : "ies") left")
            }
        }
        // Blocked: refused before any PIN is read or sent.
        let verifies = cardCommands(log, ins: "20", p1p2: "00 01")
        XCTAssertThrowsError(try key(pin: "1234").agree(with: sender.publicKey)) { error in
            XCTAssertEqual("\(error)", "PIN1 is blocked; unblock it with the PUK (asicfs card unblock pin1)")
        }
        XCTAssertEqual(cardCommands(log, ins: "20", p1p2: "00 01"), verifies)
        XCTAssertEqual(cardCommands(log, ins: "2A", p1p2: "80 86"), 0, "no key agreement without PIN1")
    }

    func testThalesInitialPIN1MustBeChangedFirst() throws {
        let state = folder + "/initial.json"
        try Data(#"{"pins": {"pin1": {"value": "1234", "tries": 3, "max": 3, "changed": false}, "pin2": {"value": "12345", "tries": 3, "max": 3, "changed": true}, "puk": {"value": "17258403", "tries": 3, "max": 3, "changed": true}}}"#.utf8)
            .write(to: URL(fileURLWithPath: state))
        try readers.insert(card { $0.kind = .thales; $0.state = state }, reader: 0)
        XCTAssertThrowsError(try key(pin: "1234").agree(with: try RecipientKeyTesting.ephemeral(.p384).publicKey)) { error in
            XCTAssertEqual("\(error)", "PIN1 is still the card's initial one; change it first (asicfs card change-pin pin1)")
        }
    }

    /// pinentry asks for PIN1 naming the holder, as for signing; the fake pinentry logs this
    /// process's environment and command line, which must not hold the PIN (a distinctive one).
    func testPinentryAsksForPIN1AndThePINIsInNoEnvironmentOrCommandLine() throws {
        let pin = "80516273"
        let state = folder + "/pin1.json"
        try Data(#"{"pins": {"pin1": {"value": "\#(pin)", "tries": 3, "max": 3, "changed": true}, "pin2": {"value": "12345", "tries": 3, "max": 3, "changed": true}, "puk": {"value": "17258403", "tries": 3, "max": 3, "changed": true}}}"#.utf8)
            .write(to: URL(fileURLWithPath: state))
        try readers.insert(card { $0.state = state }, reader: 0, log: log)
        let program = folder + "/fake-pinentry", transcriptFile = folder + "/pinentry.log"
        try FakePinentry.write(to: program, pin: pin, log: transcriptFile)
        var configuration = try RecipientKeyTesting.configuration()
        try configuration.set("pinentry", program, origin: "test")
        // One wrong PIN first: pinentry then shows the counter above its prompt.
        XCTAssertThrowsError(try key(pin: "11111111").agree(with: try RecipientKeyTesting.ephemeral(.p384).publicKey)) { error in
            XCTAssertEqual("\(error)", "wrong PIN1, 2 tries left")
        }
        for commandLine in [true, false] {
            let events = EventLog()
            let key = try IDCardRecipientKey(parameters: SigningParameters(), configuration: configuration, commandLine: commandLine,
                                             events: { events.record($0) })
            try assertAgreement(key, authKey: pki + "/card-auth.key")
            XCTAssertTrue(events.texts.contains("enter PIN1 for the ID-card in Virtual PCD 00 00 (asked by \(program))"), "\(events.texts)")
        }
        let transcript = try String(contentsOfFile: transcriptFile, encoding: .utf8)
        XCTAssertTrue(transcript.contains("SETDESC Decrypt with the ID-card of JAAK-KRISTJAN JÕEORG (PNOEE-38001085718)"), transcript)
        XCTAssertTrue(transcript.contains("SETPROMPT PIN1:"), transcript)
        XCTAssertEqual(transcript.components(separatedBy: "SETERROR 2 tries left").count, 2, "only the first ask: \(transcript)")
        XCTAssertTrue(transcript.contains("PARENT-ARGV "), transcript)
        XCTAssertFalse(transcript.contains(pin), "the PIN is in neither environment nor command line: \(transcript)")
        XCTAssertFalse(try String(contentsOfFile: log, encoding: .utf8).contains(pin))
        XCTAssertEqual(cardCommands(log, ins: "20", p1p2: "00 01"), 3)
    }

    /// Parameters are checked before the card is touched: a mount has no pin-fd=, a CAN is digits.
    func testParametersAreCheckedFirst() throws {
        XCTAssertThrowsError(try IDCardRecipientKey(parameters: SigningParameters(["pin-fd": "3"]),
                                                    configuration: try RecipientKeyTesting.configuration(), commandLine: false)) { error in
            XCTAssertEqual("\(error)", "id-card: pin-fd= is for the command line; in a mount pinentry asks for PIN1")
        }
        XCTAssertThrowsError(try key(pin: nil, ["can": "12ab"])) { error in
            XCTAssertEqual("\(error)", "id-card: can= takes the card access number, the digits printed on the card")
        }
    }

    func testCardPulledAtTheKeyAgreement() throws {
        try readers.insert(card { $0.pullOn = "2A" }, reader: 0)
        let key = try key(pin: "1234")
        XCTAssertThrowsError(try key.agree(with: try RecipientKeyTesting.ephemeral(.p384).publicKey)) { error in
            XCTAssertEqual("\(error)", "the card was removed; nothing was decrypted (insert it and try again)")
        }
    }

    func testNoCardAndNoMatchingReader() throws {
        XCTAssertThrowsError(try key(pin: "1234")) { error in
            XCTAssertEqual("\(error)", "insert the ID-card (readers: Virtual PCD 00 00; Virtual PCD 00 01)")
        }
        XCTAssertThrowsError(try key(pin: "1234", ["reader": "Nonesuch"])) { error in
            XCTAssertEqual("\(error)", "no reader matches 'Nonesuch' (readers: Virtual PCD 00 00; Virtual PCD 00 01)")
        }
    }

    func testRSAAndOtherCurvesAreRefusedInOneSentence() throws {
        try readers.insert(card(), reader: 0, log: log)
        let key = try key(pin: "1234")
        XCTAssertThrowsError(try key.decrypt([UInt8](repeating: 1, count: 256), padding: .pkcs1v15)) { error in
            XCTAssertEqual((error as? CDOCError)?.code, .unsupported)
            XCTAssertEqual("\(error)", "the ID-card's authentication key is EC: it cannot decrypt a key wrapped with RSA "
                + "(RSA ID-cards are expired and not supported)")
        }
        XCTAssertThrowsError(try key.agree(with: try RecipientKeyTesting.ephemeral(.p256).publicKey)) { error in
            XCTAssertEqual("\(error)", "the sender's key is not on the card's curve (P-384)")
        }
        XCTAssertEqual(cardCommands(log, ins: "20", p1p2: "00 01"), 0, "refused before PIN1 was used")
    }

    /// OpenSC's opensc-pkcs11.so over the same virtual card: C_DeriveKey with CKM_ECDH1_DERIVE
    /// reaches the card as the same MSE:SET + PSO:DECIPHER and gives the same Z.
    func testOpenSCDerivesTheSameSecretOnTheIDEMIACard() throws {
        try readers.insert(card(), reader: 0, log: log)
        let fd = try RecipientKeyTesting.pinDescriptor("1234", in: folder)
        let key = try PKCS11RecipientKey(parameters: SigningParameters(["module": "/usr/lib/x86_64-linux-gnu/opensc-pkcs11.so", "pin-fd": "\(fd)"]),
                                         configuration: try RecipientKeyTesting.configuration())
        XCTAssertEqual(key.certificate?.der, try RecipientKeyTesting.certificateDER(pki + "/card-auth.pem"))
        let sender = try RecipientKeyTesting.ephemeral(.p384)
        let z = RecipientKeyTesting.bytes(try key.agree(with: sender.publicKey))
        XCTAssertEqual(z, RecipientKeyTesting.bytes(try RecipientKeyTesting.privateKey(pki + "/card-auth.key").agree(with: sender.publicKey)))
        XCTAssertEqual(cardCommands(log, ins: "2A", p1p2: "80 86"), 1)
    }

    /// OpenSC 0.23 (Debian 12) has no driver for the Thales card (spec §3.3: ECDH through OpenSC
    /// "not found"): its drivers probe the card and none takes it, so decrypting with a Thales
    /// card goes through `--method id-card` only. A newer OpenSC that knows it fails this test.
    func testOpenSCShowsNoTokenForTheThalesCard() throws {
        try readers.insert(card { $0.kind = .thales }, reader: 0, log: log)
        XCTAssertThrowsError(try PKCS11RecipientKey(parameters: SigningParameters(["module": "/usr/lib/x86_64-linux-gnu/opensc-pkcs11.so"]),
                                                    configuration: try RecipientKeyTesting.configuration())) { error in
            XCTAssertEqual("\(error)", "no PKCS#11 token found in /usr/lib/x86_64-linux-gnu/opensc-pkcs11.so: is it plugged in?")
        }
    }
}

import Crypto
@testable import SmartCard
import XCTest

final class SecureMessagingTests: XCTestCase {
    // MARK: Known answers

    /// AES-128 command protection from a real passport trace, as kept in the gmrtd project's
    /// tests (github.com/gmrtd/gmrtd, iso7816/secure_messaging_test.go, TestSecureMessageEncode):
    /// MSE:SET AT with data, no Le, SSC ..BA stepped to ..BB.
    func testProtectingACommandMatchesARecordedTrace() throws {
        var session = SecureMessaging(encryptionKey: secret("cc86415f2ed7e8fd663b754265695ae1"),
                                      macKey: secret("581e84b8ee06c4d3eee30461498d7fb3"),
                                      counter: bytes("000000000000000000000000000000ba"))
        let command = CommandAPDU(ins: 0x22, p1: 0x41, p2: 0xA4, data: bytes("800a04007f000702020302028401c3"))
        let protected = try session.protect(command)
        XCTAssertEqual(protected.bytes, bytes("0c2241a41d871101980953d37f67558690045d78a853b18a8e08929767a2cef172e200"))
        XCTAssertEqual(session.counter, bytes("000000000000000000000000000000bb"))
    }

    /// AES-128 response unwrapping from the same source (TestSecureMessageDecode): 224 bytes
    /// of data in DO87 with a two-byte length, SSC ..0B stepped to ..0C.
    func testUnprotectingAResponseMatchesARecordedTrace() throws {
        var session = SecureMessaging(encryptionKey: secret("a8e85e938514ec67ae33cda3d43d3c48"),
                                      macKey: secret("27f1adeb705a049a305b0c619b14b9b3"),
                                      counter: bytes("0000000000000000000000000000000b"))
        let response = try ResponseAPDU(bytes: bytes(Self.recordedResponse))
        let plain = try session.unprotect(response)
        XCTAssertEqual(plain.sw, 0x9000)
        XCTAssertEqual(plain.data, bytes(Self.recordedPlainData))
        XCTAssertEqual(session.counter, bytes("0000000000000000000000000000000c"))

        var tampered = response
        tampered.data[40] ^= 0x01
        var again = SecureMessaging(encryptionKey: secret("a8e85e938514ec67ae33cda3d43d3c48"),
                                    macKey: secret("27f1adeb705a049a305b0c619b14b9b3"),
                                    counter: bytes("0000000000000000000000000000000b"))
        XCTAssertThrowsError(try again.unprotect(tampered)) { XCTAssertEqual($0 as? SecureMessagingError, .badMAC) }
    }

    // MARK: Round trips against the card side (Support/CardSideSecureMessaging.swift)

    func testCommandsOfEveryShapeRoundTrip() throws {
        for keyLength in [16, 24, 32] {
            let (channel, card) = Self.pair(keyLength: keyLength) { command in
                switch command.ins {
                case 0xB0: ResponseAPDU(data: Array(0 ..< UInt8(command.le! == 256 ? 255 : command.le!)), sw1: 0x90, sw2: 0x00)
                case 0xB1: ResponseAPDU(data: command.data.reversed(), sw1: 0x90, sw2: 0x00)
                case 0x20: ResponseAPDU(sw: 0x63C2)
                default: ResponseAPDU(sw: 0x9000)
                }
            }
            let commands = [
                CommandAPDU(ins: 0xA4, p1: 0x01, p2: 0x0C, data: [0x3F, 0x00]),                    // even INS, data: DO87
                CommandAPDU(ins: 0xB0, p1: 0x00, p2: 0x00, le: 256),                               // Le 256: DO97 00
                CommandAPDU(ins: 0xB0, p1: 0x00, p2: 0x10, le: 16),                                // DO97 10
                CommandAPDU(ins: 0xB1, p1: 0x00, p2: 0x00, data: [0x54, 0x02, 0x00, 0x00], le: 256), // odd INS: DO85
                CommandAPDU(ins: 0x20, p1: 0x00, p2: 0x81, data: Array("1234".utf8) + [UInt8](repeating: 0xFF, count: 12)), // 16 bytes: a full padding block
                CommandAPDU(ins: 0x22, p1: 0xF3, p2: 0x01),                                        // no data, no Le
                CommandAPDU(cla: 0x10, ins: 0xD6, p1: 0, p2: 0, data: Array(repeating: 7, count: 239)),  // chained; the longest without Le
                CommandAPDU(ins: 0x2A, p1: 0x9E, p2: 0x9A, data: Array(repeating: 7, count: 223), le: 256), // the longest with Le
            ]
            for command in commands {
                let response = try channel.transmit(command)
                XCTAssertEqual(card.received.last, command, "AES-\(keyLength * 8) \(command)")
                switch command.ins {
                case 0xB0: XCTAssertEqual(response.data.count, command.le == 256 ? 255 : 16)
                case 0xB1: XCTAssertEqual(response.data, command.data.reversed())
                case 0x20: XCTAssertEqual(response.sw, 0x63C2)
                default: XCTAssertEqual(response, ResponseAPDU(sw: 0x9000))
                }
            }
            XCTAssertEqual(card.received.count, commands.count)
            XCTAssertEqual(channel.counter.last, UInt8(2 * commands.count))
            XCTAssertEqual(card.ssc, channel.counter)
        }
    }

    func testACommandTooLongForSecureMessagingIsRefusedAndTheChannelGoesOn() throws {
        let (channel, card) = Self.pair(keyLength: 32) { _ in ResponseAPDU(sw: 0x9000) }
        XCTAssertThrowsError(try channel.transmit(CommandAPDU(ins: 0xD6, p1: 0, p2: 0, data: Array(repeating: 1, count: 240)))) {
            XCTAssertEqual($0 as? SecureMessagingError, .commandTooLong(240))
        }
        XCTAssertThrowsError(try channel.transmit(CommandAPDU(ins: 0x2A, p1: 0x9E, p2: 0x9A, data: Array(repeating: 1, count: 224), le: 256))) {
            XCTAssertEqual($0 as? SecureMessagingError, .commandTooLong(224))
        }
        XCTAssertEqual(try channel.transmit(CommandAPDU(ins: 0xA4, p1: 0, p2: 0x0C)).sw, 0x9000)
        XCTAssertEqual(card.received.count, 1)
    }

    func testATamperedResponseMACClosesTheChannel() throws {
        let (channel, card) = Self.pair(keyLength: 32) { _ in ResponseAPDU(data: [1, 2, 3], sw1: 0x90, sw2: 0x00) }
        card.nextFault = .flipMAC
        XCTAssertThrowsError(try channel.transmit(CommandAPDU(ins: 0xB0, p1: 0, p2: 0, le: 256))) {
            XCTAssertEqual($0 as? SecureMessagingError, .badMAC)
        }
        XCTAssertThrowsError(try channel.transmit(CommandAPDU(ins: 0xB0, p1: 0, p2: 0, le: 256))) {
            XCTAssertEqual($0 as? SecureMessagingError, .closed)
        }
        XCTAssertEqual(card.received.count, 1)
    }

    func testTamperedResponseDataFailsTheMAC() throws {
        let (channel, card) = Self.pair(keyLength: 16) { _ in ResponseAPDU(data: [1, 2, 3], sw1: 0x90, sw2: 0x00) }
        card.nextFault = .flipData
        XCTAssertThrowsError(try channel.transmit(CommandAPDU(ins: 0xB0, p1: 0, p2: 0, le: 256))) {
            XCTAssertEqual($0 as? SecureMessagingError, .badMAC)
        }
    }

    func testAPlainAnswerMeansTheCardEndedTheSession() throws {
        for sw: UInt16 in [0x6988, 0x6987, 0x9000] {
            let (channel, card) = Self.pair(keyLength: 32) { _ in ResponseAPDU(sw: 0x9000) }
            card.nextFault = .answerPlain(sw)
            XCTAssertThrowsError(try channel.transmit(CommandAPDU(ins: 0xA4, p1: 0, p2: 0x0C))) {
                XCTAssertEqual($0 as? SecureMessagingError, .ended(sw))
            }
        }
    }

    func testAnAnswerWithoutItsStatusObjectIsMalformed() throws {
        let (channel, card) = Self.pair(keyLength: 32) { _ in ResponseAPDU(data: [9], sw1: 0x90, sw2: 0x00) }
        card.nextFault = .dropStatusObject
        XCTAssertThrowsError(try channel.transmit(CommandAPDU(ins: 0xB0, p1: 0, p2: 0, le: 1))) { error in
            guard case .malformed = error as? SecureMessagingError else { return XCTFail("\(error)") }
        }
    }

    func testACardThatRejectsOurMACEndsTheSession() throws {
        // The card holds another MAC key: it refuses the command with a plain 6988.
        let card = CardSideSecureMessaging(encryptionKey: SecretBytes(Array(repeating: 1, count: 32)),
                                           macKey: SecretBytes(Array(repeating: 3, count: 32))) { _ in ResponseAPDU(sw: 0x9000) }
        let channel = SecureMessagingChannel(over: card, session: SecureMessaging(encryptionKey: SecretBytes(Array(repeating: 1, count: 32)),
                                                                                  macKey: SecretBytes(Array(repeating: 2, count: 32))))
        XCTAssertThrowsError(try channel.transmit(CommandAPDU(ins: 0xA4, p1: 0, p2: 0x0C))) {
            XCTAssertEqual($0 as? SecureMessagingError, .ended(0x6988))
        }
        XCTAssertTrue(card.received.isEmpty)
    }

    func testHostileResponsesGiveErrors() throws {
        let hostile = ["", "8E08 0102030405060708", "9902 9000", "99 03 900000 8E08 0102030405060708", "87 05 01", "87 FF 01 9000",
                       "87 84 00000010 01", "9902 9000 8E08 0102030405060708 00", "8E08 0102030405060708 9902 9000",
                       "87 01 01 9902 9000 8E08 0102030405060708", "1F FF FF FF 00"]
        for text in hostile {
            var session = SecureMessaging(encryptionKey: SecretBytes(Array(repeating: 1, count: 16)), macKey: SecretBytes(Array(repeating: 2, count: 16)))
            XCTAssertThrowsError(try session.unprotect(ResponseAPDU(data: bytes(text), sw1: 0x90, sw2: 0x00)), text)
        }
    }

    func testThePaddingIsISO7816() {
        XCTAssertEqual(ISOPadding.pad([]), [0x80] + Array(repeating: 0, count: 15))
        XCTAssertEqual(ISOPadding.pad(Array(repeating: 1, count: 15)), Array(repeating: 1, count: 15) + [0x80])
        XCTAssertEqual(ISOPadding.pad(Array(repeating: 1, count: 16)).count, 32)
        XCTAssertEqual(ISOPadding.unpad([1, 2, 0x80, 0, 0]), [1, 2])
        XCTAssertNil(ISOPadding.unpad([1, 2, 0, 0]))
        XCTAssertNil(ISOPadding.unpad([]))
    }

    // MARK: -

    /// A client channel and a card side sharing random keys of `keyLength` bytes.
    static func pair(keyLength: Int, application: @escaping (CommandAPDU) -> ResponseAPDU) -> (SecureMessagingChannel, CardSideSecureMessaging) {
        let encryption = (0 ..< keyLength).map { _ in UInt8.random(in: 0 ... 255) }
        let mac = (0 ..< keyLength).map { _ in UInt8.random(in: 0 ... 255) }
        let card = CardSideSecureMessaging(encryptionKey: SecretBytes(encryption), macKey: SecretBytes(mac), application: application)
        let channel = SecureMessagingChannel(over: card, session: SecureMessaging(encryptionKey: SecretBytes(encryption), macKey: SecretBytes(mac)))
        return (channel, card)
    }

    static let recordedResponse = "8781e1012fabf9e0655d7e987fd28a8aeb19c9cadd990d49399799ed1fe465bcea56da9ba3024291d40d23d7f1e00485d71faddc6d8c1382e8028dd22efdcc72ed47663d56d20dd6c4b867956fe0507313083ae7fc54fb46133f184febbe13ad6fd3e2616a1f4a829e75ada1a0e443ca738288f6014be8a7745d8259b089e6bee35bcc4bf5b63db5fdd84244f67eca099213b70a861b4487225aa68af684278fceb4cb809de42be3ee95b0e0d72bcdb0ed47cb56efc264e04a9397a90e81ad1d81efa2d14b2ca8ec7bd997f4b1c1fd344d5dee8589c38b227ca4cb35810060a7cc76403e990290008e083eb47ef4fa82afc99000"
    static let recordedPlainData = "a729901d1a71874700133107ec53306404307bc382c63d8c150c3c72080ace05afa0c2bea28e4fb22787139165efba91f90f8aa5814a503ad4eb04a8c7dd22ce2826043004a8c7dd22ce28268b39b55416f0447c2fb77de107dcd2a62e880ea53eeb62d57cb4390295dbc9943ab78696fa504c110461041d1c64f068cf45ffa2a63a81b7c13f6b8847a3e77ef14fe3db7fcafe0cbd10e8e826e03436d646aaef87b2e247d4af1e8abe1d7520f9c2a45cb1eb8e95cfd55262b70b29feec5864e19c054ff99129280e4646217791811142820341263c53150231008cb91e82a3"
}

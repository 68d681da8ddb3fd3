import Crypto
@testable import SmartCard
import XCTest

/// `PACE.establish` end to end against Support/EmulatedContactlessCard.swift: the ID-card's own
/// parameters (AES-256, P-256, no parameter ID), the other curves and key lengths, and failures.
final class PACETests: XCTestCase {
    static let gmAES256 = "04007F00070202040204"

    func testTheIDCardsParametersGiveAWorkingSecureChannel() throws {
        let card = Self.card(curve: .p256, oid: Self.gmAES256, keyLength: 32, can: "123456")
        let channel = try PACE.establish(over: card, can: SecretBytes(Array("123456".utf8)),
                                         cardAccess: bytes("3111 300F 060A" + Self.gmAES256 + "020102"))
        // spec §6.2: CAN is password 02; no parameter ID when EF.CardAccess gives none.
        XCTAssertEqual(card.setAuthenticationTemplate, bytes("800A" + Self.gmAES256 + "830102"))
        XCTAssertEqual(channel.counter, [UInt8](repeating: 0, count: 16))
        let response = try channel.transmit(CommandAPDU(ins: 0xB0, p1: 0, p2: 0, le: 256))
        XCTAssertEqual(response.data, Array("personal data".utf8))
        XCTAssertEqual(response.sw, 0x9000)
    }

    func testEveryCurveAndKeyLength() throws {
        let curves: [(EllipticCurve, Int)] = [(.p256, 12), (.brainpoolP256r1, 13), (.p384, 15), (.brainpoolP384r1, 16), (.brainpoolP512r1, 17), (.p521, 18)]
        let algorithms = [("04007F00070202040202", 16), ("04007F00070202040203", 24), ("04007F00070202040204", 32)]
        for (curve, id) in curves {
            for (oid, keyLength) in algorithms {
                let card = Self.card(curve: curve, oid: oid, keyLength: keyLength, can: "0987654321")
                let cardAccess = bytes("3114 3012 060A" + oid + "020102 0201" + Hex.string([UInt8(id)]))
                let channel = try PACE.establish(over: card, can: SecretBytes(Array("0987654321".utf8)), cardAccess: cardAccess)
                XCTAssertEqual(card.setAuthenticationTemplate, bytes("800A" + oid + "830102 8401" + Hex.string([UInt8(id)])), "\(curve)")
                XCTAssertEqual(try channel.transmit(CommandAPDU(ins: 0xB0, p1: 0, p2: 0, le: 256)).sw, 0x9000, "\(curve) AES-\(keyLength * 8)")
            }
        }
    }

    func testAWrongCANIsReportedAsSuch() throws {
        let card = Self.card(curve: .p256, oid: Self.gmAES256, keyLength: 32, can: "123456")
        XCTAssertThrowsError(try PACE.establish(over: card, can: SecretBytes(Array("123457".utf8)),
                                                cardAccess: bytes("3111 300F 060A" + Self.gmAES256 + "020102"))) {
            XCTAssertEqual($0 as? PACEError, .wrongCAN)
        }
    }

    func testACANMustBeDigits() {
        let card = Self.card(curve: .p256, oid: Self.gmAES256, keyLength: 32, can: "123456")
        for can in ["", "12345a", "12 345"] {
            XCTAssertThrowsError(try PACE.establish(over: card, can: SecretBytes(Array(can.utf8)), cardAccess: [])) {
                XCTAssertEqual($0 as? PACEError, .invalidCAN)
            }
        }
        XCTAssertNil(card.setAuthenticationTemplate)
    }

    func testACardReflectingOurEphemeralKeyIsRefused() {
        let card = Self.card(curve: .p256, oid: Self.gmAES256, keyLength: 32, can: "123456")
        card.reflectTerminalKey = true
        XCTAssertThrowsError(try PACE.establish(over: card, can: SecretBytes(Array("123456".utf8)),
                                                cardAccess: bytes("3111 300F 060A" + Self.gmAES256 + "020102"))) { error in
            guard case .malformed = error as? PACEError else { return XCTFail("\(error)") }
        }
    }

    func testCardRefusalsAndBrokenAnswersAreErrorsNotWrongCANs() throws {
        let access = bytes("3111 300F 060A" + Self.gmAES256 + "020102")
        let mse = "00 22 C1 A4 0F 800A" + Self.gmAES256 + "830102"
        let cases: [([(String, String)], PACEError)] = [
            ([(mse, "6A80")], .card(0x6A80)),
            ([(mse, "9000"), ("10860000027C0000", "6982")], .card(0x6982)),
            ([(mse, "9000"), ("10860000027C0000", "7C 03 80 01 00 9000")], .malformed("an encrypted nonce of 1 bytes")),
            ([(mse, "9000"), ("10860000027C0000", "7C 12 80 10 9000")], .malformed("")),
            ([(mse, "9000"), ("10860000027C0000", "7C 02 81 00 9000")], .malformed("")),
            ([(mse, "9000"), ("10860000027C0000", "9000")], .malformed("")),
        ]
        for (steps, expected) in cases {
            let card = ScriptedCard(steps)
            XCTAssertThrowsError(try PACE.establish(over: card, can: SecretBytes(Array("123456".utf8)), cardAccess: access)) { error in
                guard let error = error as? PACEError else { return XCTFail("\(error)") }
                if case .malformed = expected, case .malformed = error { return }
                XCTAssertEqual(error, expected)
            }
        }
    }

    func testAMappingKeyOffTheCurveIsMalformed() throws {
        let access = bytes("3111 300F 060A" + Self.gmAES256 + "020102")
        let can = SecretBytes(Array("123456".utf8))
        // A well-formed nonce under this CAN, then a mapping "key" that is not a P-256 point.
        let z = try AES.encryptCBC(key: SecretBytes(Array(Digest.hash(Array("123456".utf8) + [0, 0, 0, 3], .sha256))), Array(repeating: 0x11, count: 16))
        let offCurve = "04" + String(repeating: "01", count: 64)
        final class Lenient: CardChannel {
            var answers: [[UInt8]]
            init(_ answers: [[UInt8]]) { self.answers = answers }
            func transmit(_ command: CommandAPDU) throws -> ResponseAPDU { try ResponseAPDU(bytes: answers.removeFirst()) }
        }
        let card = Lenient([bytes("9000"), tlv([0x7C], tlv([0x80], z)) + [0x90, 0x00], tlv([0x7C], tlv([0x82], bytes(offCurve))) + [0x90, 0x00]])
        XCTAssertThrowsError(try PACE.establish(over: card, can: can, cardAccess: access)) { error in
            guard case .malformed(let text) = error as? PACEError else { return XCTFail("\(error)") }
            XCTAssertTrue(text.contains("mapping key"), text)
        }
    }

    static func card(curve: EllipticCurve, oid: String, keyLength: Int, can: String) -> EmulatedContactlessCard {
        EmulatedContactlessCard(oid: bytes(oid), curve: curve, keyLength: keyLength, can: can) { command in
            command.ins == 0xB0 ? ResponseAPDU(data: Array("personal data".utf8), sw1: 0x90, sw2: 0x00) : ResponseAPDU(sw: 0x6D00)
        }
    }
}

import Crypto
@testable import SmartCard
import XCTest

/// ICAO Doc 9303 Part 11 (8th ed.), Appendix G.1 "Worked Example: PACE – Generic Mapping (ECDH)":
/// id-PACE-ECDH-GM-AES-CBC-CMAC-128 on brainpoolP256r1 (parameter ID 13), password from the MRZ.
/// The values below are the appendix's; the APDU transcript is the appendix's exchange as the
/// gmrtd project replays it (github.com/gmrtd/gmrtd, pace/pace_test.go, TestDoPace_GM_ECDH),
/// cross-checked against the same values in other public PACE test suites.
final class PACEWorkedExampleTests: XCTestCase {
    enum G1 {
        /// Document number, date of birth, date of expiry, each followed by its check digit.
        static let mrzInformation = "T22000129" + "3" + "640812" + "5" + "101031" + "8"
        static let mrzKey = "7E2D2A41C74EA0B38CD36F863939BFA8E9032AAD"
        static let passwordKey = "89DED1B26624EC1E634C1989302849DD"
        static let encryptedNonce = "95A3A016522EE98D01E76CB6B98B42C3"
        static let nonce = "3F00C4D39D153F2B2A214A078D899B22"
        static let terminalMappingPrivate = "7F4EF07B9EA82FD78AD689B38D0BC78CF21F249D953BC46F4C6E19259C010F99"
        static let terminalMappingPublic = "04 7ACF3EFC982EC45565A4B155129EFBC74650DCBFA6362D896FC70262E0C2CC5E"
            + "544552DCB6725218799115B55C9BAA6D9F6BC3A9618E70C25AF71777A9C4922D"
        static let cardMappingPublic = "04 824FBA91C9CBE26BEF53A0EBE7342A3BF178CEA9F45DE0B70AA601651FBA3F57"
            + "30D8C879AAA9C9F73991E61B58F4D52EB87A0A0C709A49DC63719363CCD13C54"
        static let sharedPointH = "04 60332EF2450B5D247EF6D3868397D398852ED6E8CAF6FFEEF6BF85CA57057FD5"
            + "0840CA7415BAF3E43BD414D35AA4608B93A2CAF3A4E3EA4E82C9C13D03EB7181"
        static let mappedGenerator = "04 8CED63C91426D4F0EB1435E7CB1D74A46723A0AF21C89634F65A9AE87A9265E2"
            + "8C879506743F8611AC33645C5B985C80B5F09A0B83407C1B6A4D857AE76FE522"
        static let terminalEphemeralPrivate = "A73FB703AC1436A18E0CFA5ABB3F7BEC7A070E7A6788486BEE230C4A22762595"
        static let terminalEphemeralPublic = "04 2DB7A64C0355044EC9DF190514C625CBA2CEA48754887122F3A5EF0D5EDD301C"
            + "3556F3B3B186DF10B857B58F6A7EB80F20BA5DC7BE1D43D9BF850149FBB36462"
        static let cardEphemeralPublic = "04 9E880F842905B8B3181F7AF7CAA9F0EFB743847F44A306D2D28C1D9EC65DF6DB"
            + "7764B22277A2EDDC3C265A9F018F9CB852E111B768B326904B59A0193776F094"
        static let sharedSecret = "28768D20701247DAE81804C9E780EDE582A9996DB4A315020B2733197DB84925"
        static let encryptionKey = "F5F0E35C0D7161EE6724EE513A0D9A7F"
        static let macKey = "FE251C7858B356B24514B3BD5F4297D1"
        static let terminalToken = "C2B0BD78D94BA866"
        static let cardToken = "3ABB9674BCE93C08"
        /// PACEInfo { id-PACE-ECDH-GM-AES-CBC-CMAC-128, 2, 13 } in a SET, as gmrtd builds it.
        static let cardAccess = "3114 3012 060A 04007F00070202040202 020102 02010D"
    }

    private let algorithm = PACEAlgorithm.ecdhGenericMappingAES128

    func testThePasswordKeyComesFromTheMRZ() {
        XCTAssertEqual(Self.checkDigit("T22000129"), 3)
        XCTAssertEqual(Self.checkDigit("640812"), 5)
        XCTAssertEqual(Self.checkDigit("101031"), 8)
        let mrzKey = Digest.hash(Array(G1.mrzInformation.utf8), .sha1)
        XCTAssertEqual(mrzKey, bytes(G1.mrzKey))
        XCTAssertEqual(plain(algorithm.deriveKey(from: SecretBytes(mrzKey), counter: 3)), bytes(G1.passwordKey))
        XCTAssertEqual(try AES.decryptCBC(key: secret(G1.passwordKey), bytes(G1.encryptedNonce)), bytes(G1.nonce))
    }

    func testTheMappingGivesTheExamplesGenerator() throws {
        let group = try ECGroup(.brainpoolP256r1)
        let mappingKey = try ECScalar(bytes: bytes(G1.terminalMappingPrivate))
        XCTAssertEqual(try mappingKey.publicPoint(on: group).uncompressed(), bytes(G1.terminalMappingPublic))
        let h = try ECPoint(uncompressed: bytes(G1.cardMappingPublic), on: group).multiplied(by: mappingKey)
        XCTAssertEqual(try h.uncompressed(), bytes(G1.sharedPointH))
        let generator = try ECScalar(bytes: bytes(G1.nonce)).publicPoint(on: group).adding(h)
        XCTAssertEqual(try generator.uncompressed(), bytes(G1.mappedGenerator))

        let mapped = try group.withGenerator(generator)
        let ephemeralKey = try ECScalar(bytes: bytes(G1.terminalEphemeralPrivate))
        XCTAssertEqual(try ephemeralKey.publicPoint(on: mapped).uncompressed(), bytes(G1.terminalEphemeralPublic))
        let shared = try ephemeralKey.sharedSecret(with: ECPoint(uncompressed: bytes(G1.cardEphemeralPublic), on: mapped))
        XCTAssertEqual(plain(shared), bytes(G1.sharedSecret))
    }

    func testSessionKeysAndTokensMatchTheExample() throws {
        let shared = secret(G1.sharedSecret)
        XCTAssertEqual(plain(algorithm.deriveKey(from: shared, counter: 1)), bytes(G1.encryptionKey))
        XCTAssertEqual(plain(algorithm.deriveKey(from: shared, counter: 2)), bytes(G1.macKey))
        let macKey = secret(G1.macKey)
        XCTAssertEqual(try algorithm.authenticationToken(macKey: macKey, publicPoint: bytes(G1.cardEphemeralPublic)), bytes(G1.terminalToken))
        XCTAssertEqual(try algorithm.authenticationToken(macKey: macKey, publicPoint: bytes(G1.terminalEphemeralPublic)), bytes(G1.cardToken))
    }

    /// The whole `PACE.establish` against the example's card messages, with the example's
    /// terminal keys injected; then one command through the resulting channel to a card side
    /// holding the example's session keys.
    func testEstablishRunsTheWorkedExampleEndToEnd() throws {
        let card = Self.exampleCard(lastAnswer: "7C0A8608" + G1.cardToken + "9000")
        let cardSide = CardSideSecureMessaging(encryptionKey: secret(G1.encryptionKey), macKey: secret(G1.macKey)) { command in
            command.ins == 0xA4 ? ResponseAPDU(sw: 0x9000) : ResponseAPDU(sw: 0x6D00)
        }
        card.then = cardSide
        let channel = try establishExample(over: card)
        XCTAssertTrue(card.isFinished)
        XCTAssertEqual(channel.counter, [UInt8](repeating: 0, count: 16))

        let select = CommandAPDU(ins: 0xA4, p1: 0x02, p2: 0x0C, data: [0x01, 0x1E])
        XCTAssertEqual(try channel.transmit(select).sw, 0x9000)
        XCTAssertEqual(cardSide.received, [select])
        XCTAssertEqual(channel.counter, bytes("00000000000000000000000000000002"))
    }

    func testTheCardRefusingOurTokenMeansAWrongPassword() throws {
        let card = Self.exampleCard(lastAnswer: "6300")
        XCTAssertThrowsError(try establishExample(over: card)) { XCTAssertEqual($0 as? PACEError, .wrongCAN) }
    }

    func testACardTokenThatDoesNotVerifyMeansAWrongPassword() throws {
        let card = Self.exampleCard(lastAnswer: "7C0A8608" + "3ABB9674BCE93C09" + "9000")
        XCTAssertThrowsError(try establishExample(over: card)) { XCTAssertEqual($0 as? PACEError, .wrongCAN) }
    }

    // MARK: - The example's exchange

    /// MSE:SET AT as this client sends it (with `84 01 0D`, since EF.CardAccess names parameter
    /// ID 13, and `83 01 01`: the example's password is the MRZ), then the example's four steps.
    static func exampleCard(lastAnswer: String) -> ScriptedCard {
        ScriptedCard([
            ("00 22 C1 A4 12 80 0A 04007F00070202040202 83 01 01 84 01 0D", "9000"),
            ("10 86 00 00 02 7C 00 00", "7C12 8010" + G1.encryptedNonce + "9000"),
            ("10 86 00 00 45 7C43 8141" + G1.terminalMappingPublic + "00", "7C43 8241" + G1.cardMappingPublic + "9000"),
            ("10 86 00 00 45 7C43 8341" + G1.terminalEphemeralPublic + "00", "7C43 8441" + G1.cardEphemeralPublic + "9000"),
            ("00 86 00 00 0C 7C0A 8508" + G1.terminalToken + "00", lastAnswer),
        ])
    }

    private func establishExample(over card: ScriptedCard) throws -> SecureMessagingChannel {
        var keys = [G1.terminalMappingPrivate, G1.terminalEphemeralPrivate]
        let parameters = try CardAccess(der: bytes(G1.cardAccess)).parameters()
        XCTAssertEqual(parameters.curve, .brainpoolP256r1)
        return try PACE.establish(over: card, password: SecretBytes(Digest.hash(Array(G1.mrzInformation.utf8), .sha1)),
                                  kind: .mrz, parameters: parameters) { _ in try ECScalar(bytes: bytes(keys.removeFirst())) }
    }

    /// ICAO 9303 Part 3 §4.9: weights 7, 3, 1; digits as themselves, A–Z as 10–35, `<` as 0.
    static func checkDigit(_ field: String) -> Int {
        let weights = [7, 3, 1]
        return field.unicodeScalars.enumerated().reduce(0) { sum, item in
            let scalar = item.element
            let value = switch scalar {
            case "0" ... "9": Int(scalar.value) - 48
            case "A" ... "Z": Int(scalar.value) - 55
            default: 0
            }
            return sum + value * weights[item.offset % 3]
        } % 10
    }
}

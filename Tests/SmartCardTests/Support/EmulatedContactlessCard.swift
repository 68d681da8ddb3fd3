import Crypto
import SmartCard

/// A contactless ID-card as spec §6 describes it: MSE:SET AT, four GENERAL AUTHENTICATE steps
/// (ECDH generic mapping), then secure messaging in front of `application`. Written from
/// BSI TR-03110 / ICAO 9303-11 with its own KDF and token code, to run PACE end to end on curves
/// and key lengths the ICAO example does not cover (the ID-card's AES-256 on P-256).
final class EmulatedContactlessCard: CardChannel {
    let oid: [UInt8]
    let curve: EllipticCurve
    let keyLength: Int
    private let can: [UInt8]
    private let application: (CommandAPDU) -> ResponseAPDU
    /// The MSE:SET AT data the terminal sent.
    private(set) var setAuthenticationTemplate: [UInt8]?
    private(set) var secureMessaging: CardSideSecureMessaging?
    /// Make the card answer its own ephemeral key with the terminal's (a reflection attack).
    var reflectTerminalKey = false

    private var step = 0
    private var nonce: [UInt8] = []
    private var group: ECGroup?
    private var mapped: ECGroup?
    private var ephemeralKey: ECScalar?
    private var cardPublic: [UInt8] = []
    private var terminalPublic: [UInt8] = []

    init(oid: [UInt8], curve: EllipticCurve, keyLength: Int, can: String, application: @escaping (CommandAPDU) -> ResponseAPDU) {
        self.oid = oid
        self.curve = curve
        self.keyLength = keyLength
        self.can = Array(can.utf8)
        self.application = application
    }

    func transmit(_ command: CommandAPDU) throws -> ResponseAPDU {
        if let secureMessaging { return try secureMessaging.transmit(command) }
        switch (command.ins, step) {
        case (0x22, 0):
            setAuthenticationTemplate = command.data
            step = 1
            return ResponseAPDU(sw: 0x9000)
        case (0x86, 1...4):
            let expectedCLA: UInt8 = step == 4 ? 0x00 : 0x10
            guard command.cla == expectedCLA, command.le == 256, let inner = value(of: 0x7C, in: command.data) else { return ResponseAPDU(sw: 0x6A80) }
            return try generalAuthenticate(inner: inner)
        default:
            return ResponseAPDU(sw: 0x6985)
        }
    }

    private func generalAuthenticate(inner: [UInt8]) throws -> ResponseAPDU {
        defer { step += 1 }
        switch step {
        case 1:
            nonce = (0 ..< 16).map { _ in UInt8.random(in: 0 ... 255) }
            let z = try AES.encryptCBC(key: kdf(can, 3), nonce)
            return answer(tlv([0x80], z))
        case 2:
            let group = try ECGroup(curve)
            let mappingKey = try ECScalar.random(in: group)
            let terminalMapping = try ECPoint(uncompressed: value(of: 0x81, in: inner) ?? [], on: group)
            let h = try terminalMapping.multiplied(by: mappingKey)
            mapped = try group.withGenerator(ECScalar(bytes: nonce).publicPoint(on: group).adding(h))
            self.group = group
            return answer(tlv([0x82], try mappingKey.publicPoint(on: group).uncompressed()))
        case 3:
            guard let mapped else { return ResponseAPDU(sw: 0x6985) }
            terminalPublic = value(of: 0x83, in: inner) ?? []
            let key = try ECScalar.random(in: mapped)
            ephemeralKey = key
            cardPublic = reflectTerminalKey ? terminalPublic : try key.publicPoint(on: mapped).uncompressed()
            return answer(tlv([0x84], cardPublic))
        case 4:
            guard let mapped, let ephemeralKey else { return ResponseAPDU(sw: 0x6985) }
            let k = try ephemeralKey.sharedSecret(with: ECPoint(uncompressed: terminalPublic, on: mapped))
            let kEnc = kdf(plain(k), 1), kMac = kdf(plain(k), 2)
            guard value(of: 0x85, in: inner) == (try token(kMac, cardPublic)) else { return ResponseAPDU(sw: 0x6300) }
            secureMessaging = CardSideSecureMessaging(encryptionKey: kEnc, macKey: kMac, application: application)
            return answer(tlv([0x86], try token(kMac, terminalPublic)))
        default:
            return ResponseAPDU(sw: 0x6985)
        }
    }

    private func answer(_ object: [UInt8]) -> ResponseAPDU { ResponseAPDU(data: tlv([0x7C], object), sw1: 0x90, sw2: 0x00) }

    /// The value of the one data object the terminal sent (tag, length as 1 or 81 xx, value).
    private func value(of tag: UInt8, in object: [UInt8]) -> [UInt8]? {
        guard object.count >= 2, object[0] == tag else { return nil }
        let start = object[1] == 0x81 ? 3 : 2
        guard object.count >= start else { return nil }
        return Array(object[start...])
    }

    private func kdf(_ secret: [UInt8], _ counter: UInt8) -> SecretBytes {
        let digest = Digest.hash(secret + [0, 0, 0, counter], keyLength == 16 ? .sha1 : .sha256)
        return SecretBytes(Array(digest[0 ..< keyLength]))
    }

    private func token(_ macKey: SecretBytes, _ point: [UInt8]) throws -> [UInt8] {
        Array(try CMAC.aes(key: macKey, tlv([0x7F, 0x49], tlv([0x06], oid) + tlv([0x86], point)))[0 ..< 8])
    }
}

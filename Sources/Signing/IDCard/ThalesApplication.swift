import Crypto
import SmartCard

/// The Thales ID-card (2025): one PKCS#15-style application, files by path from the MF, PINs
/// padded with 00, signing as VERIFY, MSE, PSO:HASH, PSO:CDS (spec §4).
final class ThalesApplication: EstEIDApplication {
    let kind = CardKind.thales
    let channel: CardChannel
    /// T=0 cards take the retry-counter query without its Le.
    let isT0: Bool

    static let aid = Hex.bytes("A0 00 00 00 63 50 4B 43 53 2D 31 35")!
    /// Bytes per READ BINARY. Under secure messaging 256 plain bytes wrap to a 291-byte answer,
    /// more than a short response holds: 223 (0xDF) is the most that still fits.
    let readChunk: Int
    static let secureMessagingReadChunk = 0xDF

    init(channel: CardChannel, isT0: Bool, readChunk: Int = 256) {
        self.channel = channel
        self.isT0 = isT0
        self.readChunk = readChunk
    }

    func select() throws {
        try CardStatus.check(try channel.transmit(CommandAPDU(ins: 0xA4, p1: 0x04, p2: 0x0C, data: Self.aid)), "select the application")
    }

    func certificate(_ which: CardCertificate) throws -> [UInt8] {
        try select()
        let path: [UInt8] = which == .authentication ? [0xAD, 0xF1, 0x34, 0x11] : [0xAD, 0xF2, 0x34, 0x21]
        let response = try channel.transmit(CommandAPDU(ins: 0xA4, p1: 0x08, p2: 0x04, data: path, le: 256))
        try CardStatus.check(response, "select the \(which.rawValue) certificate")
        return try readBinary(channel, size: try fileSize(fromFCI: response.data), chunk: readChunk)
    }

    func holder() throws -> CardHolder {
        try select()
        try CardStatus.check(try channel.transmit(CommandAPDU(ins: 0xA4, p1: 0x08, p2: 0x0C, data: [0xDF, 0xDD])), "select the personal data")
        return try readHolder(channel)
    }

    func reference(_ secret: CardSecret) -> UInt8 {
        switch secret {
        case .pin1: 0x81
        case .pin2: 0x82
        case .puk: 0x83
        }
    }

    func selectApplication(for secret: CardSecret) throws { try select() }

    func retryCounter(_ secret: CardSecret) throws -> RetryCounter {
        try select()
        let response = try channel.transmit(CommandAPDU(ins: 0xCB, p1: 0x00, p2: 0xFF, data: [0xA0, 0x03, 0x83, 0x01, reference(secret)],
                                                        le: isT0 ? nil : 256))
        try CardStatus.check(response, "tell the \(secret.name) retry counter")
        guard let left = TLV.find(0xDF21, in: response.data).flatMap(TLV.number) else {
            throw IDCardError.other("the card's \(secret.name) retry counter could not be read")
        }
        let changed = TLV.find(0xDF2F, in: response.data).flatMap(TLV.number).map { $0 != 0 }
        // The card does not report its maximum: it is 3 for every secret.
        return RetryCounter(triesLeft: left, maxTries: 3, changed: secret == .puk ? nil : changed)
    }

    func verifyCommand(_ secret: CardSecret, pin: SecretBytes?) -> CommandAPDU {
        CommandAPDU(ins: 0x20, p1: 0x00, p2: reference(secret), data: CardStatus.paddedPINs([pin], pad: 0x00))
    }

    func prepareSigning() throws { try select() }

    func sign(digest: [UInt8]) throws -> [UInt8] {
        let algorithm: UInt8 = switch digest.count {
        case 28: 0x34
        case 32: 0x44
        case 48: 0x54
        default: 0x64
        }
        let mse = CommandAPDU(ins: 0x22, p1: 0x41, p2: 0xB6, data: [0x80, 0x01, algorithm, 0x84, 0x01, 0x05])
        try CardStatus.check(try channel.transmit(mse), "set up the signing key")
        let hash = CommandAPDU(ins: 0x2A, p1: 0x90, p2: 0xA0, data: [0x90, UInt8(digest.count)] + digest)
        try CardStatus.check(try channel.transmit(hash), "take the hash to sign")
        let response = try channel.transmit(CommandAPDU(ins: 0x2A, p1: 0x9E, p2: 0x9A, le: 256))
        if response.sw == 0x6982 { throw IDCardError.refused("sign: PIN2 is not verified", sw: response.sw) }
        try CardStatus.check(response, "sign")
        return response.data
    }

    func prepareKeyAgreement() throws { try select() }

    func agree(point: [UInt8]) throws -> SecretBytes {
        // MSE:SET, confidentiality template: no algorithm reference, key 01 (authentication).
        let mse = CommandAPDU(ins: 0x22, p1: 0x41, p2: 0xB8, data: [0x84, 0x01, 0x01])
        try CardStatus.check(try channel.transmit(mse), "set up the authentication key for decryption")
        return try decipherKeyAgreement(point, channel: channel)
    }

    func change(_ secret: CardSecret, old: SecretBytes, new: SecretBytes) throws {
        guard secret != .puk else { throw IDCardError.unsupported("the PUK of a Thales ID-card cannot be changed") }
        try changeReferenceData(secret, reference: reference(secret), old: old, new: new, pad: 0x00, channel: channel)
    }

    func unblock(_ secret: CardSecret, puk: SecretBytes, new: SecretBytes) throws {
        try select()
        // RESET RETRY COUNTER with the PUK and the new value in one command (P1 00).
        var command = CommandAPDU(ins: 0x2C, p1: 0x00, p2: reference(secret),
                                  data: CardStatus.paddedPINs([puk, new], pad: 0x00))
        defer { CardStatus.wipe(&command) }
        let response = try channel.transmit(command)
        if response.sw == 0x6A80 { throw IDCardError.other("the card refused the new \(secret.name)") }
        try CardStatus.checkVerification(response, .puk)
    }
}

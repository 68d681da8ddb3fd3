import Crypto
import SmartCard

/// IDEMIA Cosmo 8 / Cosmo X (EstEID 2018+): IAS-ECC main application for certificates, personal
/// data, PIN1 and PUK; the QSCD application for the signing key and PIN2 (spec §3).
final class IDEMIAApplication: EstEIDApplication {
    let kind = CardKind.idemia
    let channel: CardChannel

    static let mainAID = Hex.bytes("A0 00 00 00 77 01 08 00 07 00 00 FE 00 00 01 00")!
    static let qscdAID = Array("QSCD Application".utf8)
    /// The authentication application, home of the authentication key (spec §3.2 step 1).
    static let awpAID = Hex.bytes("E8 28 BD 08 0F F2 50 4F 54 20 41 57 50")!
    /// At most this many bytes per READ BINARY (some cards and readers fail above it).
    static let readChunk = 0xC0

    init(channel: CardChannel) { self.channel = channel }

    func select(_ aid: [UInt8]) throws {
        try CardStatus.check(try channel.transmit(CommandAPDU(ins: 0xA4, p1: 0x04, p2: 0x0C, data: aid)), "select an application")
    }

    func certificate(_ which: CardCertificate) throws -> [UInt8] {
        try select(Self.mainAID)
        let path: [UInt8] = which == .authentication ? [0xAD, 0xF1, 0x34, 0x01] : [0xAD, 0xF2, 0x34, 0x1F]
        let response = try channel.transmit(CommandAPDU(ins: 0xA4, p1: 0x09, p2: 0x04, data: path, le: 256))
        try CardStatus.check(response, "select the \(which.rawValue) certificate")
        return try readBinary(channel, size: try fileSize(fromFCI: response.data), chunk: Self.readChunk)
    }

    func holder() throws -> CardHolder {
        try select(Self.mainAID)
        try CardStatus.check(try channel.transmit(CommandAPDU(ins: 0xA4, p1: 0x01, p2: 0x0C, data: [0x50, 0x00])), "select the personal data")
        return try readHolder(channel)
    }

    func reference(_ secret: CardSecret) -> UInt8 {
        switch secret {
        case .pin1: 0x01
        case .pin2: 0x85
        case .puk: 0x02
        }
    }

    func selectApplication(for secret: CardSecret) throws {
        try select(secret == .pin2 ? Self.qscdAID : Self.mainAID)
    }

    func retryCounter(_ secret: CardSecret) throws -> RetryCounter {
        try selectApplication(for: secret)
        let number: UInt8 = secret == .pin1 ? 1 : secret == .puk ? 2 : 5
        let response = try channel.transmit(CommandAPDU(ins: 0xCB, p1: 0x3F, p2: 0xFF,
                                                        data: [0x4D, 0x08, 0x70, 0x06, 0xBF, 0x81, number, 0x02, 0xA0, 0x80], le: 256))
        try CardStatus.check(response, "tell the \(secret.name) retry counter")
        guard let maximum = TLV.find(0x9A, in: response.data).flatMap(TLV.number),
              let left = TLV.find(0x9B, in: response.data).flatMap(TLV.number) else {
            throw IDCardError.other("the card's \(secret.name) retry counter could not be read")
        }
        return RetryCounter(triesLeft: left, maxTries: maximum, changed: nil)
    }

    func verifyCommand(_ secret: CardSecret, pin: SecretBytes?) -> CommandAPDU {
        CommandAPDU(ins: 0x20, p1: 0x00, p2: reference(secret), data: CardStatus.paddedPINs([pin], pad: 0xFF))
    }

    func prepareSigning() throws {
        try select(Self.qscdAID)
        // MSE:SET for the digital signature template: ECDSA, key 9F (the signing key).
        let mse = CommandAPDU(ins: 0x22, p1: 0x41, p2: 0xB6, data: [0x80, 0x01, 0x54, 0x84, 0x01, 0x9F])
        try CardStatus.check(try channel.transmit(mse), "set up the signing key")
    }

    func sign(digest: [UInt8]) throws -> [UInt8] {
        // The card takes exactly 48 bytes: a shorter hash is left-padded with zeros (the same
        // number for ECDSA on P-384), a longer one cut to its leftmost 48 bytes (FIPS 186-5).
        let block = digest.count >= 48 ? Array(digest.prefix(48)) : [UInt8](repeating: 0, count: 48 - digest.count) + digest
        let response = try channel.transmit(CommandAPDU(ins: 0x2A, p1: 0x9E, p2: 0x9A, data: block, le: 256))
        if response.sw == 0x6982 { throw IDCardError.refused("sign: PIN2 is not verified", sw: response.sw) }
        try CardStatus.check(response, "sign")
        return response.data
    }

    func prepareKeyAgreement() throws { try select(Self.awpAID) }

    func agree(point: [UInt8]) throws -> SecretBytes {
        // MSE:SET, confidentiality template: algorithm FF 30 04 00 (ECDH), key 81 (authentication).
        let mse = CommandAPDU(ins: 0x22, p1: 0x41, p2: 0xB8, data: [0x80, 0x04, 0xFF, 0x30, 0x04, 0x00, 0x84, 0x01, 0x81])
        try CardStatus.check(try channel.transmit(mse), "set up the authentication key for decryption")
        return try decipherKeyAgreement(point, channel: channel)
    }

    func change(_ secret: CardSecret, old: SecretBytes, new: SecretBytes) throws {
        try changeReferenceData(secret, reference: reference(secret), old: old, new: new, pad: 0xFF, channel: channel)
    }

    func unblock(_ secret: CardSecret, puk: SecretBytes, new: SecretBytes) throws {
        try select(Self.mainAID)
        try verify(.puk, pin: puk, channel: channel)
        if secret == .pin2 { try select(Self.qscdAID) }
        // RESET RETRY COUNTER with the new value only (P1 02): the PUK was verified above.
        var command = CommandAPDU(ins: 0x2C, p1: 0x02, p2: reference(secret), data: CardStatus.paddedPINs([new], pad: 0xFF))
        defer { CardStatus.wipe(&command) }
        let response = try channel.transmit(command)
        if response.sw == 0x6A80 { throw IDCardError.other("the card refused the new \(secret.name)") }
        try CardStatus.check(response, "unblock \(secret.name)")
    }
}

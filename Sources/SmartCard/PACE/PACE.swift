import Crypto

/// PACE with the card access number (ICAO 9303-11 §4.4, BSI TR-03110; spec §6.2): ECDH with
/// generic mapping, then AES secure messaging. Runs over a plain channel to a contactless card
/// and returns the secure channel every later command goes through.
public enum PACE {
    /// MSE:SET AT password references.
    enum Password: UInt8 {
        case mrz = 0x01
        case can = 0x02
    }

    /// Runs PACE with `can` (ASCII digits) using the first supported PACEInfo of `cardAccess`
    /// (the bytes of EF.CardAccess, see `CardAccess.read(from:)`).
    public static func establish(over channel: CardChannel, can: SecretBytes, cardAccess: [UInt8]) throws -> SecureMessagingChannel {
        let digits = can.withBytes { bytes in bytes.allSatisfy { (0x30 ... 0x39).contains($0) } }
        guard !can.isEmpty, digits else { throw PACEError.invalidCAN }
        let parameters = try CardAccess(der: cardAccess).parameters()
        return try establish(over: channel, password: can, kind: .can, parameters: parameters, privateKey: ECScalar.random(in:))
    }

    /// The protocol itself. `privateKey` makes the terminal's two key pairs (on the standard
    /// group for the mapping, on the mapped group for the key agreement): random in use, fixed
    /// by the known-answer test.
    static func establish(over channel: CardChannel, password: SecretBytes, kind: Password, parameters: PACEParameters,
                          privateKey: (ECGroup) throws -> ECScalar) throws -> SecureMessagingChannel {
        let algorithm = parameters.algorithm
        try setAuthenticationTemplate(channel, parameters, kind)

        // 1. The card's nonce, encrypted under Kπ = KDF(password, 3) with a zero IV.
        let encryptedNonce = try generalAuthenticate(channel, nil, expecting: 0x80, last: false)
        guard !encryptedNonce.isEmpty, encryptedNonce.count % AES.blockSize == 0 else {
            throw PACEError.malformed("an encrypted nonce of \(encryptedNonce.count) bytes")
        }
        var nonce = try AES.decryptCBC(key: algorithm.deriveKey(from: password, counter: 3), encryptedNonce)
        defer { SecretBytes.zero(&nonce) }

        // 2. Generic mapping: G' = s·G + H, where H = our mapping key × the card's.
        let group = try ECGroup(parameters.curve)
        let mappingKey = try privateKey(group)
        let ourMappingKey = try mappingKey.publicPoint(on: group).uncompressed()
        let cardMappingKey = try generalAuthenticate(channel, TLV(tag: 0x81, value: ourMappingKey), expecting: 0x82, last: false)
        let mapped = try blamingCard("mapping key") {
            let h = try ECPoint(uncompressed: cardMappingKey, on: group).multiplied(by: mappingKey)
            let sG = try ECScalar(bytes: nonce).publicPoint(on: group)
            return try group.withGenerator(sG.adding(h))
        }

        // 3. Key agreement on G': K = x(our ephemeral key × the card's).
        let ephemeralKey = try privateKey(mapped)
        let ourPublic = try ephemeralKey.publicPoint(on: mapped)
        let cardPublicBytes = try generalAuthenticate(channel, TLV(tag: 0x83, value: ourPublic.uncompressed()), expecting: 0x84, last: false)
        let cardPublic = try blamingCard("ephemeral key") { try ECPoint(uncompressed: cardPublicBytes, on: mapped) }
        guard cardPublic != ourPublic else { throw PACEError.malformed("the card returned our own ephemeral key") }
        let shared = try blamingCard("ephemeral key") { try ephemeralKey.sharedSecret(with: cardPublic) }
        let encryptionKey = algorithm.deriveKey(from: shared, counter: 1)
        let macKey = algorithm.deriveKey(from: shared, counter: 2)
        shared.wipe()

        // 4. Mutual authentication: each side MACs the other's ephemeral key.
        let ourToken = try algorithm.authenticationToken(macKey: macKey, publicPoint: cardPublic.uncompressed())
        let cardToken = try generalAuthenticate(channel, TLV(tag: 0x85, value: ourToken), expecting: 0x86, last: true)
        let expected = try algorithm.authenticationToken(macKey: macKey, publicPoint: ourPublic.uncompressed())
        guard CMAC.equal(cardToken, expected) else { throw PACEError.wrongCAN }
        return SecureMessagingChannel(over: channel, session: SecureMessaging(encryptionKey: encryptionKey, macKey: macKey))
    }

    /// MSE:SET AT `00 22 C1 A4 Lc 80 L <OID> 83 01 <password> [84 01 <parameter ID>]`; the
    /// parameter ID goes only when EF.CardAccess named one (as [I]; [A] sends none).
    private static func setAuthenticationTemplate(_ channel: CardChannel, _ parameters: PACEParameters, _ kind: Password) throws {
        var data = TLV(tag: 0x80, value: parameters.algorithm.oid).encoded + TLV(tag: 0x83, value: [kind.rawValue]).encoded
        if let id = parameters.parameterID { data += TLV(tag: 0x84, value: [UInt8(id)]).encoded }
        let response = try channel.transmit(CommandAPDU(ins: 0x22, p1: 0xC1, p2: 0xA4, data: data))
        guard response.isSuccess else { throw PACEError.card(response.sw) }
    }

    /// One GENERAL AUTHENTICATE step: `7C { object }` out (CLA 10 while chained, 00 for the
    /// last), `7C { … expecting … }` back. 63xx on the last step means the card rejected our token.
    private static func generalAuthenticate(_ channel: CardChannel, _ object: TLV?, expecting tag: UInt32, last: Bool) throws -> [UInt8] {
        let command = CommandAPDU(cla: last ? 0x00 : 0x10, ins: 0x86, p1: 0x00, p2: 0x00,
                                  data: TLV(tag: 0x7C, value: object?.encoded ?? []).encoded, le: 256)
        let response = try channel.transmit(command)
        if last && response.sw1 == 0x63 { throw PACEError.wrongCAN }
        guard response.isSuccess else { throw PACEError.card(response.sw) }
        do {
            let outer = try TLV.single(response.data)
            guard outer.tag == 0x7C, let found = try TLV.sequence(outer.value).first(where: { $0.tag == tag }) else {
                throw PACEError.malformed("GENERAL AUTHENTICATE answered without tag \(Hex.string(TLV.tagBytes(tag)))")
            }
            return found.value
        } catch let error as CardError {
            throw PACEError.malformed("GENERAL AUTHENTICATE: \(error)")
        }
    }

    /// Runs arithmetic on the card's points: a point off the curve, or a result at infinity, is a
    /// malformed answer rather than an internal error.
    private static func blamingCard<T>(_ what: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as CryptoError {
            throw PACEError.malformed("the card's \(what): \(error)")
        }
    }
}

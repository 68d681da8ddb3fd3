import Crypto
import Glibc
import SmartCard

/// Which certificate of the card.
public enum CardCertificate: String, CaseIterable, Sendable {
    case authentication, signing
}

/// The two kinds of Estonian ID-card in use (since 2018): both hold P-384 keys, with different
/// files, PIN references and signing commands.
public enum CardKind: String, Sendable {
    case idemia = "IDEMIA", thales = "Thales"

    /// Exact ATRs (contact interface), from the open-source clients (spec §1).
    static let atrs: [[UInt8]: CardKind] = [
        Hex.bytes("3B DB 96 00 80 B1 FE 45 1F 83 00 12 23 3F 53 65 49 44 0F 90 00 F1")!: .idemia,
        Hex.bytes("3B DC 96 00 80 B1 FE 45 1F 83 00 12 23 3F 54 65 49 44 32 0F 90 00 C3")!: .idemia,
        Hex.bytes("3B FF 96 00 00 80 31 FE 43 80 31 B8 53 65 49 44 64 B0 85 05 10 12 23 3F 1D")!: .thales,
    ]

    static func contact(atr: [UInt8]) -> CardKind? { atrs[atr] }

    /// A contactless card behind a PC/SC reader gets an ATR the reader makes up from the card's
    /// answer (PC/SC part 3: `3B 8n 80 01 …`); which kind it is shows only after PACE.
    /// Storage cards (MIFARE and the like: historical bytes `80 4F …`) are not.
    static func looksContactless(atr: [UInt8]) -> Bool {
        guard atr.count >= 4, atr[0] == 0x3B, atr[1] & 0xF0 == 0x80, atr[2] == 0x80, atr[3] == 0x01 else { return false }
        let storageCard = atr.count >= 6 && atr[4] == 0x80 && atr[5] == 0x4F
        return !storageCard
    }
}

/// One card application's commands over a channel (plain, or secure messaging after PACE).
/// Signing is three steps because the PIN may be typed on a PIN pad between them: `prepareSigning`
/// selects and sets up, then the PIN is verified (`verifyCommand` for a PIN pad, `verify`
/// otherwise), then `sign` computes; selecting anything in between would drop the PIN.
protocol EstEIDApplication {
    var kind: CardKind { get }
    func certificate(_ which: CardCertificate) throws -> [UInt8]
    func holder() throws -> CardHolder
    func retryCounter(_ secret: CardSecret) throws -> RetryCounter
    /// Selects what `secret` belongs to, so that a VERIFY that follows counts for it.
    func selectApplication(for secret: CardSecret) throws
    /// The VERIFY command for `secret`, with its padded PIN (all padding when `pin` is nil: the
    /// template a PIN pad fills in).
    func verifyCommand(_ secret: CardSecret, pin: SecretBytes?) -> CommandAPDU
    func prepareSigning() throws
    /// Signs a digest with the signing key (PIN2 verified just before); raw r‖s.
    func sign(digest: [UInt8]) throws -> [UInt8]
    func change(_ secret: CardSecret, old: SecretBytes, new: SecretBytes) throws
    /// Selects the authentication key's application: PIN1 is verified after it, then `agree`.
    func prepareKeyAgreement() throws
    /// ECDH with the authentication key (PIN1 verified just before): MSE:SET for decipher, then
    /// PSO:DECIPHER with the sender's uncompressed point; the card's answer is Z.
    func agree(point: [UInt8]) throws -> SecretBytes
    func unblock(_ secret: CardSecret, puk: SecretBytes, new: SecretBytes) throws
}

extension EstEIDApplication {
    /// CHANGE REFERENCE DATA with the old and the new value, `pad`-padded, in one command (the
    /// application the secret belongs to is selected first).
    func changeReferenceData(_ secret: CardSecret, reference: UInt8, old: SecretBytes, new: SecretBytes, pad: UInt8,
                             channel: CardChannel) throws {
        try selectApplication(for: secret)
        var command = CommandAPDU(ins: 0x24, p1: 0x00, p2: reference, data: CardStatus.paddedPINs([old, new], pad: pad))
        defer { CardStatus.wipe(&command) }
        let response = try channel.transmit(command)
        if response.sw == 0x6985 || response.sw == 0x6A80 {
            throw IDCardError.other("the card refused the new \(secret.name) (it must differ from the old one)")
        }
        try CardStatus.checkVerification(response, secret)
    }

    /// Verifies `secret`: the status word as an error.
    func verify(_ secret: CardSecret, pin: SecretBytes, channel: CardChannel) throws {
        var command = verifyCommand(secret, pin: pin)
        defer { CardStatus.wipe(&command) }
        let response = try channel.transmit(command)
        try CardStatus.checkVerification(response, secret)
    }
}

extension EstEIDApplication {
    /// PSO:DECIPHER for key agreement, the same on both cards (spec §3.2 step 4, §3.3 step 4):
    /// data = the padding-indicator byte 00 and the point; answer = the X coordinate.
    func decipherKeyAgreement(_ point: [UInt8], channel: CardChannel) throws -> SecretBytes {
        var response = try channel.transmit(CommandAPDU(ins: 0x2A, p1: 0x80, p2: 0x86, data: [0x00] + point, le: 256))
        defer { SecretBytes.zero(&response.data) }
        switch response.sw {
        case 0x9000: break
        case 0x6982: throw IDCardError.refused("decrypt: PIN1 is not verified", sw: response.sw)
        case 0x6A80: throw IDCardError.other("the card refused the sender's key: it is not a point on the card's curve")
        default: try CardStatus.check(response, "decrypt")
        }
        // Z is one coordinate long (48 bytes on P-384): anything else is no answer to use.
        guard response.data.count == (point.count - 1) / 2 else {
            throw IDCardError.other("the card answered the key agreement with \(response.data.count) bytes, not \((point.count - 1) / 2)")
        }
        return SecretBytes(response.data)
    }
}

/// Status words of PIN commands and the rest, as errors.
enum CardStatus {
    static func checkVerification(_ response: ResponseAPDU, _ secret: CardSecret) throws {
        switch response.sw {
        case 0x9000: return
        case 0x63C0, 0x6983, 0x6984: throw IDCardError.blocked(secret)
        case 0x63C1...0x63CF: throw IDCardError.wrongSecret(secret, triesLeft: Int(response.sw2 & 0x0F))
        case 0x6400: throw IDCardError.other("the PIN pad timed out waiting for \(secret.name)")
        case 0x6401: throw IDCardError.cancelled(secret)
        case 0x6402: throw IDCardError.other("the two new \(secret.name) values typed on the PIN pad differ")
        case 0x6403, 0x6A80, 0x6700: throw IDCardError.other("\(secret.name) has the wrong length (\(secret.lengths.lowerBound) to \(secret.lengths.upperBound) digits)")
        default: throw IDCardError.refused("verify \(secret.name)", sw: response.sw)
        }
    }

    static func check(_ response: ResponseAPDU, _ what: String) throws {
        guard response.isSuccess else {
            if response.sw == 0x6982 { throw IDCardError.refused("\(what): PIN not verified", sw: response.sw) }
            throw IDCardError.refused(what, sw: response.sw)
        }
    }

    /// 12-byte PIN blocks, one after the other in one buffer (no temporary copies of a PIN):
    /// the digits, then `pad` bytes (FF on IDEMIA, 00 on Thales). A nil PIN is all padding.
    static func paddedPINs(_ pins: [SecretBytes?], pad: UInt8) -> [UInt8] {
        var blocks = [UInt8](repeating: pad, count: 12 * pins.count)
        for (number, pin) in pins.enumerated() {
            pin?.withBytes { bytes in
                for (index, byte) in bytes.prefix(12).enumerated() { blocks[number * 12 + index] = byte }
            }
        }
        return blocks
    }

    static func wipe(_ command: inout CommandAPDU) {
        command.data.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
    }
}

/// READ BINARY of the selected file, `chunk` bytes at a time, up to `size`.
func readBinary(_ channel: CardChannel, size: Int, chunk: Int) throws -> [UInt8] {
    var data: [UInt8] = []
    data.reserveCapacity(size)
    while data.count < size {
        let want = min(chunk, size - data.count)
        let response = try channel.transmit(CommandAPDU(ins: 0xB0, p1: UInt8(data.count >> 8), p2: UInt8(data.count & 0xFF), le: want))
        try CardStatus.check(response, "read a file")
        guard !response.data.isEmpty else { break }
        data += response.data.prefix(size - data.count)
    }
    guard data.count == size else { throw IDCardError.other("the card returned \(data.count) of the file's \(size) bytes") }
    return data
}

/// The personal data file's fields that asicfs shows (surname, given names, personal code,
/// document number, expiry), read from the personal data folder the caller selected.
func readHolder(_ channel: CardChannel) throws -> CardHolder {
    var records: [Int: [UInt8]] = [:]
    for number in [1, 2, 6, 7, 8] {
        let selected = try channel.transmit(CommandAPDU(ins: 0xA4, p1: 0x02, p2: 0x0C, data: [0x50, UInt8(number)]))
        try CardStatus.check(selected, "select personal data field \(number)")
        let read = try channel.transmit(CommandAPDU(ins: 0xB0, p1: 0, p2: 0, le: 256))
        try CardStatus.check(read, "read personal data field \(number)")
        records[number] = read.data
    }
    return CardHolder(records: records)
}

/// The size a SELECT's FCI announces (tag 80, or 81 as Thales puts it).
func fileSize(fromFCI data: [UInt8]) throws -> Int {
    if let bytes = TLV.find(0x80, in: data) ?? TLV.find(0x81, in: data), let size = TLV.number(bytes), size > 0 {
        return size
    }
    throw IDCardError.other("the card did not say how large the file is")
}

import SmartCard

/// A reader's PIN pad (PC/SC part 10, FEATURE_VERIFY_PIN_DIRECT): the reader asks for the PIN
/// and puts it into the VERIFY command itself, so the PIN never reaches this computer.
struct PINPad {
    static let verifyPINDirect: UInt8 = 0x06
    /// HID OMNIKEY readers that advertise a PIN pad they do not have (spec §2).
    static let falsePINPads = ["OMNIKEY 3x21", "OMNIKEY 3121", "OMNIKEY 3021", "OMNIKEY 6121"]

    let card: PCSCCard
    let code: UInt32

    /// The reader's PIN pad, or nil when it has none.
    init?(card: PCSCCard) {
        guard !Self.falsePINPads.contains(where: { card.reader.contains($0) }),
              let code = card.features()[Self.verifyPINDirect] else { return nil }
        self.card = card
        self.code = code
    }

    /// Sends `template` (a VERIFY with an all-padding PIN block) for the reader to fill in.
    func verify(_ template: CommandAPDU, minimumLength: Int) throws -> ResponseAPDU {
        let apdu = template.bytes
        var structure: [UInt8] = [
            0x00, 0x00,        // bTimerOut, bTimerOut2: the reader's defaults
            0x82,              // bmFormatString: PIN at byte 0 of the data, ASCII, left-aligned, units in bytes
            0x00,              // bmPINBlockString: no length field in the block
            0x00,              // bmPINLengthFormat
            12, UInt8(minimumLength),  // wPINMaxExtraDigit (little-endian): maximum 12, minimum
            0x02,              // bEntryValidationCondition: the OK key
            0x01,              // bNumberMessage: one message
            0x09, 0x04,        // wLangId: English (0x0409), little-endian
            0x00,              // bMsgIndex
            0x00, 0x00, 0x00,  // bTeoPrologue
        ]
        let length = UInt32(apdu.count)
        structure += [UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24)]
        structure += apdu
        return try ResponseAPDU(bytes: try card.control(code, structure))
    }
}

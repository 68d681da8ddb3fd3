/// Why PACE could not open a secure channel.
public enum PACEError: Error, Equatable, CustomStringConvertible {
    /// The card refused our authentication token (63xx) or its own token did not verify.
    case wrongCAN
    /// The CAN must be the digits printed on the card.
    case invalidCAN
    /// EF.CardAccess offers nothing this client speaks (the text says what it offers).
    case unsupported(String)
    /// The card answered a PACE step with this status word.
    case card(UInt16)
    /// EF.CardAccess or a card answer does not follow the protocol.
    case malformed(String)

    public var description: String {
        switch self {
        case .wrongCAN: "the card access number (CAN) is wrong"
        case .invalidCAN: "the card access number (CAN) is the digits printed on the card"
        case .unsupported(let text): "the card offers no PACE variant this program speaks: \(text)"
        case .card(let sw): "the card refused PACE (status \(Hex.string([UInt8(sw >> 8), UInt8(sw & 0xFF)])))"
        case .malformed(let text): "the card's PACE answer is malformed: \(text)"
        }
    }
}

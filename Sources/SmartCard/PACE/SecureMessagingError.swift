/// Why a command could not go through the secure channel. After any of these but
/// `commandTooLong` the channel is closed: the card's counter and ours can no longer agree.
public enum SecureMessagingError: Error, Equatable, CustomStringConvertible {
    /// The card answered in plain with this status word (6987: secure messaging objects missing,
    /// 6988: they were wrong): it has ended the secure session.
    case ended(UInt16)
    /// The card's answer carries a MAC that does not verify.
    case badMAC
    /// The card's answer is not a well-formed secure-messaging response.
    case malformed(String)
    /// The protected command would not fit a short APDU (the plain data has this many bytes).
    case commandTooLong(Int)
    /// An earlier failure closed the channel; PACE has to run again.
    case closed

    public var description: String {
        switch self {
        case .ended(let sw):
            "the card ended the secure channel (it answered \(Hex.string([UInt8(sw >> 8), UInt8(sw & 0xFF)])) without secure messaging)"
        case .badMAC: "the card's answer failed its secure-messaging MAC check"
        case .malformed(let text): "the card's secure-messaging answer is malformed: \(text)"
        case .commandTooLong(let count): "\(count) bytes of command data do not fit a secure-messaging APDU"
        case .closed: "the secure channel to the card is closed after an earlier error"
        }
    }
}

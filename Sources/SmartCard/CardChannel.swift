/// Something that carries APDUs to a card and back: a PC/SC connection, or a secure-messaging
/// channel over one. GET RESPONSE (61xx) and wrong-Le (6Cxx) retries are the channel's job, so
/// a caller sees one response per command.
public protocol CardChannel: AnyObject {
    func transmit(_ command: CommandAPDU) throws -> ResponseAPDU
}

/// Why talking to a card failed, below the level of what the card application means.
public enum CardError: Error, Equatable, CustomStringConvertible {
    /// The card left the reader (or went silent) mid-command.
    case removed
    /// PC/SC or the reader failed; the text says how.
    case transport(String)
    /// The card's answer does not follow the protocol (secure messaging, TLV structure).
    case malformed(String)

    public var description: String {
        switch self {
        case .removed: "the card was removed"
        case .transport(let text): text
        case .malformed(let text): "the card's answer is malformed: \(text)"
        }
    }
}

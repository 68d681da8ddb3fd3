import SmartCard

/// Why an ID-card operation failed, as one line a person can act on.
public enum IDCardError: Error, Equatable, CustomStringConvertible {
    case wrongSecret(CardSecret, triesLeft: Int)
    case blocked(CardSecret)
    /// The Thales card's initial PIN must be changed before the key can be used.
    case notActivated(CardSecret)
    case cancelled(CardSecret)
    case noReader
    case noCard(readers: [String])
    case noMatchingReader(String, readers: [String])
    case severalCards(readers: [String])
    case unknownCard(reader: String, atr: [UInt8])
    case needCAN(reader: String)
    case wrongCAN(reader: String)
    case removed
    case refused(String, sw: UInt16)
    case unsupported(String)
    case other(String)

    public var description: String {
        switch self {
        case .wrongSecret(let secret, let left):
            return "wrong \(secret.name), \(left) tr\(left == 1 ? "y" : "ies") left"
        case .blocked(.puk):
            return "the PUK is blocked; the card's PINs can no longer be unblocked (a new PUK comes with a new card)"
        case .blocked(let secret):
            return "\(secret.name) is blocked; unblock it with the PUK (asicfs card unblock \(secret.rawValue))"
        case .notActivated(let secret):
            return "\(secret.name) is still the card's initial one; change it first (asicfs card change-pin \(secret.rawValue))"
        case .cancelled(let secret):
            return "\(secret.name) entry was cancelled; nothing was sent to the card"
        case .noReader:
            return "no smart-card reader is connected"
        case .noCard(let readers):
            return "insert the ID-card (reader\(readers.count == 1 ? "" : "s"): \(readers.joined(separator: "; ")))"
        case .noMatchingReader(let wanted, let readers):
            return "no reader matches '\(wanted)' (readers: \(readers.joined(separator: "; ")))"
        case .severalCards(let readers):
            return "ID-cards are in several readers (\(readers.joined(separator: "; "))): choose one with reader=NAME"
        case .unknownCard(let reader, let atr):
            return "the card in \(reader) is not an Estonian ID-card (ATR \(Hex.string(atr, separator: " ")))"
        case .needCAN(let reader):
            return "the card in \(reader) is contactless: give can=DIGITS, the card access number (CAN) printed on its front"
        case .wrongCAN(let reader):
            return "the card in \(reader) did not accept the CAN: check can=DIGITS against the number printed on the card"
        case .removed:
            return "the card was removed; nothing was signed or changed (insert it and try again)"
        case .refused(let what, let sw):
            return "the card refused to \(what) (status \(Hex.string([UInt8(sw >> 8), UInt8(sw & 0xFF)], separator: " ")))"
        case .unsupported(let text), .other(let text):
            return text
        }
    }

    /// Card errors from below (transport, removal) as ID-card errors.
    static func from(_ error: Error) -> Error {
        switch error {
        case CardError.removed: return IDCardError.removed
        case CardError.transport(let text): return IDCardError.other(text)
        default: return error
        }
    }
}

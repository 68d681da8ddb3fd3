/// The three secrets of an Estonian ID-card.
public enum CardSecret: String, CaseIterable, Sendable {
    case pin1, pin2, puk

    /// As the card's documentation and the person call it.
    public var name: String {
        switch self {
        case .pin1: "PIN1"
        case .pin2: "PIN2"
        case .puk: "PUK"
        }
    }

    /// Allowed lengths: at least 4, 5 and 8 digits, at most 12 (the padded block).
    public var lengths: ClosedRange<Int> {
        switch self {
        case .pin1: 4...12
        case .pin2: 5...12
        case .puk: 8...12
        }
    }

    /// What it is for, in a prompt.
    public var purpose: String {
        switch self {
        case .pin1: "authentication"
        case .pin2: "signing"
        case .puk: "unblocking PIN1 and PIN2"
        }
    }
}

/// A secret's retry counter as the card reports it.
public struct RetryCounter: Sendable, Equatable {
    public let triesLeft: Int
    public let maxTries: Int
    /// Thales: false while the card still has its initial PIN, which must be changed before use.
    public let changed: Bool?

    public var isBlocked: Bool { triesLeft == 0 }
}

import Crypto

/// What to ask the person for: the texts pinentry shows (SETTITLE, SETDESC, SETPROMPT, SETERROR)
/// and the terminal prompt is made of.
public struct SecretRequest: Sendable, Equatable {
    /// The window title, e.g. "asicfs: ID-card".
    public var title: String
    /// Who and what the secret is for, e.g. "Sign contract.asice as JÕEORG, JAAK-KRISTJAN".
    public var description: String
    /// The secret's name: "PIN2", "PUK", "Passphrase".
    public var prompt: String
    /// Why it is asked again ("wrong PIN2, 2 tries left"), shown above the prompt.
    public var error: String?
    /// A new secret: interactive sources ask for it twice and compare.
    public var confirm: Bool
    /// Accepted lengths (in bytes); a shorter or longer answer is refused before any card sees it.
    public var lengths: ClosedRange<Int>?
    /// Digits only (PINs and PUKs).
    public var digitsOnly: Bool

    public init(title: String = "asicfs", description: String, prompt: String, error: String? = nil,
                confirm: Bool = false, lengths: ClosedRange<Int>? = nil, digitsOnly: Bool = false) {
        self.title = title
        self.description = description
        self.prompt = prompt
        self.error = error
        self.confirm = confirm
        self.lengths = lengths
        self.digitsOnly = digitsOnly
    }

    /// Checks an answer's form; the sentence names the secret.
    func check(_ secret: SecretBytes) throws {
        try secret.withBytes { bytes in
            if digitsOnly, !bytes.allSatisfy({ (0x30...0x39).contains($0) }) {
                throw SecretEntryError.invalid("\(prompt) must be digits only")
            }
            if let lengths, !lengths.contains(bytes.count) {
                throw SecretEntryError.invalid("\(prompt) must be \(lengths.lowerBound) to \(lengths.upperBound) "
                    + (digitsOnly ? "digits" : "characters") + " long")
            }
        }
    }
}

/// Why no secret came back. The callers turn these into their own one-line errors.
public enum SecretEntryError: Error, Equatable, CustomStringConvertible {
    /// The person cancelled (pinentry's Cancel, Ctrl-D at the terminal): nothing was tried.
    case cancelled(String)
    /// The answer has the wrong form (length, non-digits, the two new values differ).
    case invalid(String)
    /// The source could not be used (no terminal, pinentry failed, a descriptor not open).
    case unavailable(String)

    public var description: String {
        switch self {
        case .cancelled(let what): "\(what) entry was cancelled"
        case .invalid(let why): why
        case .unavailable(let why): why
        }
    }
}

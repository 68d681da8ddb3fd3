import Configuration
import Crypto
import SmartCard

/// The ID-card as the command line (`asicfs card …`) and the mount (`status/id-card`) see it:
/// readers and holders, certificates, PIN counters, changing and unblocking PINs. Each call
/// opens its own PC/SC context and connection, and closes them.
public struct IDCardService: Sendable {
    /// A substring of the reader's PC/SC name (`reader=`), or nil for any reader.
    public let reader: String?
    /// The card access number, for a contactless card (`can=`).
    public let can: String?

    /// A card access number's form: ASCII digits, at most 12 (the cards print six).
    public static func isCardAccessNumber(_ can: String) -> Bool {
        !can.isEmpty && can.count <= 12 && can.allSatisfy { $0.isASCII && $0.isNumber }
    }

    public init(reader: String? = nil, can: String? = nil) {
        self.reader = reader
        self.can = can
    }

    /// One reader and what is in it.
    public struct ReaderReport: Sendable {
        public let name: String
        public let content: ReaderContent
        /// The card's holder, when the card was read.
        public let holder: CardHolder?
        /// Why the card was not read (a contactless card without the CAN, a wrong CAN).
        public let note: String?
    }

    /// Every reader (or those `reader` matches), reading each ID-card's personal data.
    public func status() throws -> [ReaderReport] {
        try withContext { context in
            try IDCardConnection.readers(context, matching: reader).map { name, content in
                guard content.mayBeIDCard else { return ReaderReport(name: name, content: content, holder: nil, note: nil) }
                do {
                    let connection = try IDCardConnection.open(context, reader: name, content: content, can: can)
                    let holder = try connection.card.transaction { try connection.application.holder() }
                    return ReaderReport(name: name, content: .idCard(connection.application.kind, contactless: connection.contactless),
                                        holder: holder, note: nil)
                } catch let error as IDCardError {
                    return ReaderReport(name: name, content: content, holder: nil, note: error.description)
                }
            }
        }
    }

    /// The authentication and signing certificates.
    public func certificates() throws -> [(CardCertificate, Certificate)] {
        try withCard { connection in
            try CardCertificate.allCases.map { which in
                let der = try connection.application.certificate(which)
                do { return (which, try Certificate(der: der)) } catch {
                    throw IDCardError.other("the card's \(which.rawValue) certificate is not a valid certificate")
                }
            }
        }
    }

    /// PIN1, PIN2 and PUK retry counters.
    public func retryCounters() throws -> [(CardSecret, RetryCounter)] {
        try withCard { try Self.counters($0) }
    }

    /// The holder and the counters in one connection (`status/id-card`).
    public func summary() throws -> (reader: String, holder: CardHolder, counters: [(CardSecret, RetryCounter)]) {
        try withCard { connection in
            let holder = try connection.application.holder()
            return (connection.reader, holder, try Self.counters(connection))
        }
    }

    /// CHANGE REFERENCE DATA: asks the old value (`old`) and the new one (`new`, confirmed when
    /// asked interactively) only once the card is known and the secret is not blocked.
    public func change(_ secret: CardSecret, old: SecretSource, new: SecretSource) throws {
        let (holder, counter) = try withCard { connection in
            if connection.application.kind == .thales, secret == .puk {
                throw IDCardError.unsupported("the PUK of a Thales ID-card cannot be changed")
            }
            return (try connection.application.holder(), try connection.application.retryCounter(secret))
        }
        if counter.isBlocked { throw IDCardError.blocked(secret) }
        let oldValue = try ask(old, SecretRequest(title: "asicfs: ID-card", description: "Changing \(secret.name) of \(holder.displayName)",
                                                 prompt: "current \(secret.name)", error: Self.triesNote(counter),
                                                 lengths: secret.lengths, digitsOnly: true), secret)
        defer { oldValue.wipe() }
        let newValue = try ask(new, SecretRequest(title: "asicfs: ID-card", description: "New \(secret.name) of \(holder.displayName) "
                                                 + "(\(secret.lengths.lowerBound) to \(secret.lengths.upperBound) digits)",
                                                 prompt: "new \(secret.name)", confirm: true, lengths: secret.lengths, digitsOnly: true), secret)
        defer { newValue.wipe() }
        try withCard { connection in try connection.application.change(secret, old: oldValue, new: newValue) }
    }

    /// RESET RETRY COUNTER with the PUK: sets a new PIN1 or PIN2, blocked or not (the PIN's own
    /// tries are not used).
    public func unblock(_ secret: CardSecret, puk: SecretSource, new: SecretSource) throws {
        guard secret != .puk else { throw IDCardError.unsupported("only PIN1 and PIN2 can be unblocked (with the PUK)") }
        let (holder, counter) = try withCard { connection in (try connection.application.holder(), try connection.application.retryCounter(.puk)) }
        if counter.isBlocked { throw IDCardError.blocked(.puk) }
        let pukValue = try ask(puk, SecretRequest(title: "asicfs: ID-card", description: "Unblocking \(secret.name) of \(holder.displayName)",
                                                 prompt: "PUK", error: Self.triesNote(counter), lengths: CardSecret.puk.lengths,
                                                 digitsOnly: true), .puk)
        defer { pukValue.wipe() }
        let newValue = try ask(new, SecretRequest(title: "asicfs: ID-card", description: "New \(secret.name) of \(holder.displayName) "
                                                 + "(\(secret.lengths.lowerBound) to \(secret.lengths.upperBound) digits)",
                                                 prompt: "new \(secret.name)", confirm: true, lengths: secret.lengths, digitsOnly: true), secret)
        defer { newValue.wipe() }
        try withCard { connection in try connection.application.unblock(secret, puk: pukValue, new: newValue) }
    }

    static func counters(_ connection: IDCardConnection) throws -> [(CardSecret, RetryCounter)] {
        try CardSecret.allCases.map { ($0, try connection.application.retryCounter($0)) }
    }

    /// "2 tries left" above a prompt once a wrong value was given.
    static func triesNote(_ counter: RetryCounter) -> String? {
        counter.triesLeft < counter.maxTries ? "\(counter.triesLeft) tr\(counter.triesLeft == 1 ? "y" : "ies") left" : nil
    }

    func ask(_ source: SecretSource, _ request: SecretRequest, _ secret: CardSecret) throws -> SecretBytes {
        do { return try source.ask(request) } catch SecretEntryError.cancelled {
            throw IDCardError.cancelled(secret)
        } catch let error as SecretEntryError {
            throw IDCardError.other(error.description)
        }
    }

    /// Runs `body` on the one ID-card, inside a PC/SC transaction.
    func withCard<T>(_ body: (IDCardConnection) throws -> T) throws -> T {
        try withContext { context in
            let connection = try IDCardConnection.open(context, reader: reader, can: can)
            defer { connection.card.disconnect() }
            do { return try connection.card.transaction { try body(connection) } } catch { throw IDCardError.from(error) }
        }
    }

    func withContext<T>(_ body: (PCSCContext) throws -> T) throws -> T {
        let context: PCSCContext
        do { context = try PCSCContext() } catch { throw IDCardError.from(error) }
        return try body(context)
    }
}

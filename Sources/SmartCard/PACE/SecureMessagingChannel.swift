import Crypto

/// A card channel that protects every command with the session keys PACE agreed on: callers
/// send the same plain APDUs as over contact, this channel wraps and unwraps them. Any failure
/// once a command has gone out closes it, since the counters can no longer be trusted to agree.
/// Plain command and response data are never logged or put in errors.
public final class SecureMessagingChannel: CardChannel {
    private let channel: CardChannel
    private var session: SecureMessaging
    private var isClosed = false

    init(over channel: CardChannel, session: SecureMessaging) {
        self.channel = channel
        self.session = session
    }

    public func transmit(_ command: CommandAPDU) throws -> ResponseAPDU {
        guard !isClosed else { throw SecureMessagingError.closed }
        let protected = try session.protect(command)
        do {
            return try session.unprotect(try channel.transmit(protected))
        } catch {
            isClosed = true
            throw error
        }
    }

    /// The send sequence counter now (tests check that it starts at zero).
    var counter: [UInt8] { session.counter }
}

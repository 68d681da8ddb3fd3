import Foundation
import HTTP
import Signing

/// The text written to one open `sign/<method>`: a request may arrive in several write()s, so it
/// is collected here and taken when the file is closed (`SigningCoordinator.take`), never per
/// write. Each write checks what it can (`SigningCoordinator.check`): a mistake fails that write.
final class SignRequest: @unchecked Sendable {
    enum State: Equatable {
        /// Being written; nothing refused yet.
        case open
        /// A write was refused (the reason is in `status/last-error`): closing starts nothing.
        case refused
        /// Done with at a write (`cancel`): closing starts nothing either.
        case handled
    }

    /// What the write that made the request whole (its newline) prepared: the signer is made
    /// there, so that what only making it shows (a service's list of credentials to choose from)
    /// still fails that write.
    struct Prepared {
        let parameters: SigningParameters
        let cancellation: Cancellation
        /// A failure that is no parameter error (an unreadable file): the signing fails at the close.
        let signer: Result<Signer, Error>
    }

    let method: SigningMethod
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    private var _state = State.open
    private var _prepared: (length: Int, Prepared)?

    init(method: SigningMethod) { self.method = method }

    var state: State {
        get { lock.withLock { _state } }
        set { lock.withLock { _state = newValue } }
    }

    var isEmpty: Bool { lock.withLock { bytes.isEmpty } }

    /// Adds one write's bytes (they must follow the ones before: a request is written from its
    /// start, in order) and returns the text so far; nil when it is not UTF-8 (an unfinished
    /// character at the end is not an error yet).
    func append(_ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> (text: String?, complete: Bool) {
        try lock.withLock {
            guard offset == Int64(bytes.count) else {
                throw FileSystemError(EINVAL, "\(method.rawValue): a request is written from its start, in order (a write at \(offset), "
                    + "after \(bytes.count) bytes)")
            }
            bytes += buffer
            return Self.decode(bytes)
        }
    }

    /// Keeps what the write that made `length` bytes whole prepared.
    func keep(_ prepared: Prepared) {
        lock.withLock { _prepared = (bytes.count, prepared) }
    }

    /// What was prepared, if nothing was written after it.
    var prepared: Prepared? {
        lock.withLock { _prepared.flatMap { $0.length == bytes.count ? $0.1 : nil } }
    }

    /// The whole request, at close: text, or nil when it is not UTF-8.
    var text: String? { lock.withLock { String(validating: bytes, as: UTF8.self) } }

    /// Text so far, and whether it is a whole request: it ends with a newline.
    private static func decode(_ bytes: [UInt8]) -> (text: String?, complete: Bool) {
        if let text = String(validating: bytes, as: UTF8.self) { return (text, text.hasSuffix("\n")) }
        // A character split between two writes: up to 3 bytes of its start may be missing their end.
        for cut in 1...3 where cut <= bytes.count {
            if String(validating: bytes.dropLast(cut), as: UTF8.self) != nil, bytes.suffix(cut).first! >= 0xC0 {
                return (String(validating: bytes.dropLast(cut), as: UTF8.self), false)
            }
        }
        return (nil, false)
    }
}

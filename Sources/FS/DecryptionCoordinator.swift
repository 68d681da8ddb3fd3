import ASiC
import CDOC
import Configuration
import Foundation
import Signing

/// Decrypting the mounted encrypted container: checks the requests written to
/// `decrypt/<method>`, runs one decryption at a time on a thread of its own (pinentry may ask
/// for a PIN or password: `commandLine: false`), and says how it went (`status/current`,
/// `status/last-error`). The files appear in the `EncryptedSpool` once everything decrypted
/// and authenticated; a failed decryption leaves nothing, and may be tried again.
final class DecryptionCoordinator: @unchecked Sendable {
    enum State: Equatable {
        /// `waiting`: what the person must do now (PIN1 on the PIN pad, pinentry's dialog).
        case idle, running(DecryptionMethod, waiting: String?), done(String), failed(String)
    }

    private let reader: EncryptedContainerReader
    private let spool: EncryptedSpool
    private let configuration: Configuration
    private let errors: LastError
    private let lock = NSLock()
    private var state = State.idle
    private let running = DispatchGroup()
    /// The thread of the decryption running now (its pinentry dialog is ended at unmount).
    private var thread: Thread?
    /// Told after the files appeared (the kernel's view of the root is dropped).
    var decrypted: (@Sendable () -> Void)?

    init(reader: EncryptedContainerReader, spool: EncryptedSpool, configuration: Configuration, errors: LastError) {
        self.reader = reader
        self.spool = spool
        self.configuration = configuration
        self.errors = errors
    }

    var format: EncryptedFormat { reader.format }

    /// Nothing decrypted and nothing running (a failed attempt left nothing either).
    var isIdle: Bool {
        switch lock.withLock({ state }) {
        case .idle, .failed: true
        case .running, .done: false
        }
    }
    var recipients: [Recipient] { reader.recipients }

    /// A decryption runs (the card or token may be in use).
    var isRunning: Bool {
        if case .running = lock.withLock({ state }) { return true }
        return false
    }

    /// `status/current`: one line.
    var currentText: String {
        switch lock.withLock({ state }) {
        case .idle: "idle\n"
        case .running(let method, nil): "decrypting: \(method.rawValue)\n"
        case .running(_, let waiting?): "waiting-for-user: \(PrintableText.escaped(waiting))\n"
        case .done(let summary): "done: \(PrintableText.escaped(summary))\n"
        case .failed(let reason): "failed: \(PrintableText.escaped(reason))\n"
        }
    }

    /// One write to a request file: a mistake fails this write (EINVAL; EBUSY while a decryption
    /// runs or once decrypted), and status/last-error says why.
    func write(_ request: DecryptRequest, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        let method = request.method
        guard !request.refused else {
            throw errors.failure(EINVAL, "decrypt/\(method.rawValue): this request was refused already; open the file again")
        }
        do {
            try checkStartable(method)
            guard let text = try request.append(bytes, at: offset) else {
                throw SigningParameterError("decrypt/\(method.rawValue): the request is not UTF-8 text")
            }
            if text.hasSuffix("\n") {
                _ = try parse(method, text)
            } else {
                let ended = SigningParameters.scan(text).ended
                _ = try SigningParameters.parse(arguments: ended, method: method.rawValue, allowed: method.parameterKeys)
            }
        } catch {
            request.refused = true
            let code = (error as? FileSystemError)?.code ?? EINVAL
            throw errors.failure(code, (error as? FileSystemError)?.description ?? "\(error)")
        }
    }

    private func parse(_ method: DecryptionMethod, _ text: String) throws -> SigningParameters {
        let parameters = try method.parse(arguments: try SigningParameters.tokens(text))
        try parameters.checkForMount(method: method.rawValue)
        // The daemon has none of the writer's descriptors: refused at the write, not at the close.
        if let key = parameters.values.keys.sorted().first(where: { $0.hasSuffix("-fd") }) {
            throw SigningParameterError("\(method.rawValue): \(key)= is for the command line; in a mount pinentry asks "
                + "(or give a file: \(key.dropLast(3))-file=PATH)")
        }
        return parameters
    }

    private func checkStartable(_ method: DecryptionMethod) throws {
        switch lock.withLock({ state }) {
        case .running(let other, _):
            throw FileSystemError(EBUSY, "decrypt/\(method.rawValue): a decryption (\(other.rawValue)) is running; wait for status/current")
        case .done:
            throw FileSystemError(EBUSY, "decrypt/\(method.rawValue): the container is decrypted already")
        default: break
        }
    }

    /// The request's file was closed: a request that was not refused starts the decryption.
    func take(_ request: DecryptRequest) {
        guard !request.refused, let text = request.text else { return }
        let method = request.method
        let parameters: SigningParameters
        do {
            parameters = try parse(method, text)
            try lock.withLock {
                if case .running = state { throw FileSystemError(EBUSY, "decrypt/\(method.rawValue): a decryption is running") }
                if case .done = state { throw FileSystemError(EBUSY, "decrypt/\(method.rawValue): the container is decrypted already") }
                state = .running(method, waiting: nil)
            }
        } catch {
            errors.record((error as? FileSystemError)?.description ?? "\(error)")
            return
        }
        running.enter()
        let thread = Thread { [self] in
            defer { running.leave() }
            run(method, parameters)
        }
        thread.name = "asicfs-decrypt"
        lock.withLock { self.thread = thread }
        thread.start()
    }

    private func run(_ method: DecryptionMethod, _ parameters: SigningParameters) {
        do {
            let unlocker = try method.unlocker(parameters, configuration: configuration, commandLine: false,
                                               events: { [self] in show($0, of: method) })
            try reader.decrypt(with: unlocker, into: spool)
            spool.publish()
            let count = spool.files.count
            lock.withLock { state = .done("decrypted \(count) file\(count == 1 ? "" : "s") with \(method.rawValue)") }
            decrypted?()
        } catch {
            spool.abandon()
            let reason = "decrypting with \(method.rawValue) failed: \(error)"
            lock.withLock { state = .failed(reason) }
            errors.record(reason)
        }
    }

    /// What the card or token reports while it decrypts: a wait for the person shows in
    /// `status/current` until the next step.
    private func show(_ event: SigningEvent, of method: DecryptionMethod) {
        lock.withLock {
            guard case .running(method, _) = state else { return }
            switch event {
            case .waitingForUser(let text): state = .running(method, waiting: text)
            default: state = .running(method, waiting: nil)
            }
        }
    }

    /// The decryption's state for `status/id-card`: one line, as `status/current` (the card's
    /// lines follow it there).
    var stateLine: String { String(currentText.dropLast()) }

    /// Unmount: the spool drops its key and files (a running decryption then fails at its next
    /// write), a pinentry dialog the decryption opened is ended (nobody waits for its PIN any
    /// more), and a decryption still running is given a moment to end.
    func close() {
        spool.discard()
        if let thread = lock.withLock({ thread }) { PinentryDialogs.end(startedBy: thread) }
        _ = running.wait(timeout: .now() + 5)
    }
}

import ASiC
import Foundation
import HTTP
import Signing

/// Signings started by writing to `.asicfs/sign/<method>`: at most one at a time, each on its
/// own background thread, followed through `status/current`, `status/<method>` and `status/wait`.
///
/// A request is checked on the writer's thread at every write (`write`): bad parameters fail the
/// write with EINVAL. It starts when its file is closed (`take`): the mount is claimed
/// (`MountClaim`: no data file may change until the signing ends) and pending
/// changes are committed. A problem found then (a file still open for writing, a missing or
/// unreadable PKCS#12 file, a wrong passphrase) can fail no write: the signing ends at once as
/// failed, which `status/wait` reports. Otherwise the session runs on the
/// snapshot that commit produced; success switches the mount to the signed snapshot.
///
/// Locking: `condition` guards everything below. Holding it, the coordinator may take the
/// claim's and the data files' locks (claim, release, recordError); they never call in here.
final class SigningCoordinator: @unchecked Sendable {
    /// How the last signing ended; its `line` is what `status/wait` and `status/current` show.
    enum Outcome: Equatable {
        case done(String)
        case failed(String)

        var line: String {
            switch self {
            case .done(let summary): "done: \(PrintableText.escaped(summary))"
            case .failed(let reason): "failed: \(PrintableText.escaped(reason))"
            }
        }
    }

    private struct Running {
        let method: SigningMethod
        /// "Signing …" on the desktop, replaced by how it ended.
        var notification: ReplaceableNotification? = nil
        /// "signing: <step>" or "waiting-for-user: <what>".
        var state: String
        var code = VerificationCode.pending
        let cancellation: Cancellation
    }

    /// A phone signing's verification code: not known until the digest is; shown while the user
    /// compares it with the phone; over once a step after the phone's answer starts.
    private enum VerificationCode: Equatable {
        case pending
        case shown(String, userAsked: Bool)
        case over
    }

    /// Readers blocked in `status/wait` and `status/<method>` at once. libfuse serves requests with
    /// at most ten threads: the rest stay free for everything else.
    static let maximumWaiters = 6

    let environment: SignatureEnvironment
    /// The mount's claim: all the coordinator holds of the mount.
    private let claim: MountClaim
    private let condition = NSCondition()
    private var running: Running?
    private var last: Outcome?
    /// How the last signing of each method ended, for `status/<method>`.
    private var lastOfMethod: [SigningMethod: Outcome] = [:]
    /// Signatures made in this mount: "<signature file>#<Id>" -> method.
    private var methods: [String: SigningMethod] = [:]
    private var waiters = 0
    /// Requests written and not closed yet (`SignRequest`s): they start at their close, so
    /// `status/wait` waits for them as for a running signing.
    private var pending: [ObjectIdentifier: SigningMethod] = [:]
    private let threads = DispatchGroup()
    /// Smart-ID v3 qr=yes: the link and QR image of status/smart-id and status/smart-id.png.
    let smartIDQR = SmartIDQRStatus()

    init(claim: MountClaim, environment: SignatureEnvironment) {
        self.claim = claim
        self.environment = environment
    }

    // MARK: - Starting

    /// One write to `sign/<method>`: adds to `request` and checks it as far as it goes, so that a
    /// mistake fails the write that made it (EINVAL, EBUSY; the reason in `status/last-error`).
    /// A request that ends with a newline is checked whole; before that, the parameters already
    /// ended by white space. Nothing starts here: `take` starts the signing when the file is
    /// closed. `cancel` (a whole line) stops the running signing of the method at once.
    func write(_ request: SignRequest, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        let method = request.method
        guard request.state == .open else {
            throw claim.failure(EINVAL, "\(method.rawValue): this request was refused or done with already; open the file again")
        }
        do {
            let (text, complete) = try request.append(bytes, at: offset)
            guard let text else { throw SigningParameterError("\(method.rawValue): the request is not UTF-8 text") }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if complete, trimmed == "cancel" {
                request.state = .handled
                return try cancel(method)
            }
            if !complete, !trimmed.isEmpty, "cancel".hasPrefix(trimmed) { return }
            let parameters = complete ? try method.parse(text) : try method.checkBeginning(text)
            try parameters.checkForMount(method: method.rawValue)
            try condition.withLock {
                try checkStartable(method, besides: ObjectIdentifier(request))
                pending[ObjectIdentifier(request)] = method
            }
            if complete { request.keep(try prepare(method, parameters)) }
        } catch {
            condition.withLock {
                request.state = .refused
                pending[ObjectIdentifier(request)] = nil
                condition.broadcast()
            }
            let code = (error as? FileSystemError)?.code ?? EINVAL
            throw claim.failure(code, (error as? FileSystemError)?.description ?? "\(error)")
        }
    }

    /// Makes the signer of a whole request (this reads its files, may ask for a secret through
    /// pinentry, may ask a service which keys it has): a parameter error fails the write; any
    /// other failure is the signing's, reported once the request is taken.
    private func prepare(_ method: SigningMethod, _ parameters: SigningParameters) throws -> SignRequest.Prepared {
        let cancellation = Cancellation()
        let signer: Result<Signer, Error>
        do {
            signer = .success(try method.signer(parameters, context: SignerContext(environment: environment, cancellation: cancellation,
                                                                                   commandLine: false)))
        } catch let error as SigningParameterError {
            throw error
        } catch {
            signer = .failure(error)
        }
        return SignRequest.Prepared(parameters: parameters, cancellation: cancellation, signer: signer)
    }

    /// What a write can tell about starting a signing now (the caller holds `condition`): none
    /// runs or is requested by another open file, the container has data files and none open for
    /// writing, the method's settings are there.
    private func checkStartable(_ method: SigningMethod, besides request: ObjectIdentifier) throws {
        if let running {
            throw FileSystemError(EBUSY, "cannot start a \(method.rawValue) signing: a \(running.method.rawValue) signing is "
                + "already running (see .asicfs/status/current; cat .asicfs/status/wait waits for it to end)")
        }
        if let other = pending.first(where: { $0.key != request }) {
            throw FileSystemError(EBUSY, "cannot start a \(method.rawValue) signing: a \(other.value.rawValue) signing is "
                + "already requested (it starts when its file is closed; cat .asicfs/status/wait waits for it to end)")
        }
        if claim.dataFileCount == 0 {
            throw SigningParameterError("cannot sign: the container has no data files; copy the files to sign into the mount first")
        }
        if let name = claim.fileOpenForWriting {
            throw FileSystemError(EBUSY, "cannot sign: '\(PrintableText.escaped(name))' is still open for writing; close it first, "
                + "so that the signature covers its final content")
        }
        try method.checkSettings(environment.configuration)
    }

    /// The last close of a `sign/<method>` file: the request written to it is checked whole and
    /// the signing starts in the background. A request refused only now (a parameter missing
    /// from a request without a final newline) cannot fail a write any more: it ends as a failed
    /// signing that never started (`status/wait`, `status/last-error`). An empty or refused
    /// request starts nothing.
    func take(_ request: SignRequest) {
        let id = ObjectIdentifier(request)
        let method = request.method
        guard request.state == .open, !request.isEmpty else {
            condition.withLock {
                pending[id] = nil
                condition.broadcast()
            }
            return
        }
        let prepared = request.prepared
        let parameters: SigningParameters
        do {
            guard let text = request.text else { throw SigningParameterError("\(method.rawValue): the request is not UTF-8 text") }
            if text.trimmingCharacters(in: .whitespacesAndNewlines) == "cancel" {
                _ = try? cancel(method)
                return
            }
            parameters = try prepared?.parameters ?? method.parse(text)
            try parameters.checkForMount(method: method.rawValue)
        } catch {
            return refuseAtClose(id, method, "\(error)")
        }

        let cancellation = prepared?.cancellation ?? Cancellation()
        let refusal: String? = condition.withLock {
            pending[id] = nil
            do {
                try checkStartable(method, besides: id)
                try claim.claim("a \(method.rawValue) signing is running", for: "start a \(method.rawValue) signing")
                running = Running(method: method, state: "signing: starting", cancellation: cancellation)
                return nil
            } catch {
                return (error as? FileSystemError)?.description ?? "\(error)"
            }
        }
        if let refusal { return refuseAtClose(id, method, refusal) }
        let name = PathText.lastComponent(of: claim.containerPath)
        let notification = ReplaceableNotification("asicfs: signing \(name)", "with \(method.rawValue); see .asicfs/status/current",
                                                   configuration: environment.configuration)
        condition.withLock { running?.notification = notification }

        let signer: Signer
        let snapshot: Container
        do {
            signer = try prepared?.signer.get()
                ?? method.signer(parameters, context: SignerContext(environment: environment, cancellation: cancellation,
                                                                    commandLine: false))
            snapshot = try claim.snapshot()
        } catch {
            // The signer could not be made (unreadable file, wrong passphrase), or a file is still
            // open for writing: a signing that failed.
            finish(method, .failure(error))
            return
        }

        threads.enter()
        let thread = Thread { [self] in
            defer { threads.leave() }
            let session = SigningSession(container: snapshot, signer: signer, environment: environment,
                                         details: method.signerDetails(parameters), cancellation: cancellation)
            finish(method, Result { try session.run { self.note($0) } })
        }
        thread.name = "asicfs signing"
        thread.start()
    }

    /// A request refused at its close: no signing started, and that is how the last one ended.
    private func refuseAtClose(_ id: ObjectIdentifier, _ method: SigningMethod, _ reason: String) {
        condition.withLock {
            pending[id] = nil
            claim.recordError("\(reason) (the request was refused when its file was closed; nothing was signed)")
            last = .failed("the \(method.rawValue) request was refused: \(reason)")
            lastOfMethod[method] = last
            condition.broadcast()
        }
    }

    /// `echo cancel > sign/<method>`: stops the running signing of that method. It ends as a
    /// failed signing ("cancelled"), with the container unchanged; network waits stop within
    /// about a second.
    private func cancel(_ method: SigningMethod) throws {
        try condition.withLock {
            guard let running, running.method == method else {
                throw claim.failure(EINVAL, "cancel: no \(method.rawValue) signing is running")
            }
            running.cancellation.cancel()
        }
    }

    private func note(_ event: SigningEvent) {
        condition.withLock {
            guard running != nil else { return }
            switch event {
            case .step(let step):
                smartIDQR.clear()  // Smart-ID v3: a step after the QR code means it was scanned.
                // A step after the phone asked the user: the user has answered, the code is done with.
                if case .shown(_, userAsked: true) = running!.code { running!.code = .over }
                running!.state = "signing: \(step)"
            case .waitingForUser(let what):
                if case .shown(let code, _) = running!.code { running!.code = .shown(code, userAsked: true) }
                running!.state = "waiting-for-user: \(what)"
            case .deviceLink(let link, _):
                // Smart-ID v3 QR signing: no code to wait for; the link replaces it (SmartIDQRStatus).
                if smartIDQR.link == nil {
                    DesktopNotification.smartIDQRCode(
                        where: ".asicfs/status/smart-id.png of the mounted \(PathText.lastComponent(of: claim.containerPath))",
                                                      configuration: environment.configuration)
                }
                smartIDQR.update(link)
                running!.code = .over
            case .verificationCode(let code):
                running!.code = .shown(code, userAsked: false)
                DesktopNotification.verificationCode(code, method: running!.method.rawValue,
                                                     configuration: environment.configuration)
            }
            // Readers of status/<method> wait for the code.
            condition.broadcast()
        }
    }

    /// Ends the running signing: the mount adopts the signed container (before anyone waiting
    /// is woken, so what they do next sees it) or stays as it was.
    private func finish(_ method: SigningMethod, _ result: Result<SigningOutcome, Error>) {
        let name = PathText.lastComponent(of: claim.containerPath)
        let notification = condition.withLock { running?.notification }
        switch result {
        case .success(let outcome):
            notification?.replace("asicfs: \(name) signed", PrintableText.escaped(outcome.summary))
        case .failure(let error):
            notification?.replace("asicfs: signing \(name) failed", PrintableText.escaped("\(error)"), urgent: true)
        }
        condition.withLock {
            switch result {
            case .success(let outcome):
                claim.release(adopting: outcome.container)
                methods[Self.key(outcome.signatureFile, outcome.signatureId)] = method
                last = .done(outcome.summary)
            case .failure(let error):
                claim.release(adopting: nil)
                let reason = claim.shown("\(error)")
                claim.recordError("signing with \(method.rawValue) failed: \(reason)")
                SystemLog.error("\(claim.containerPath): signing with \(method.rawValue) failed: \(reason)")
                last = .failed(reason)
            }
            lastOfMethod[method] = last
            running = nil
            smartIDQR.clear()
            condition.broadcast()
        }
    }

    // MARK: - Across a browse mount's reopen

    /// What a browse mount keeps of a container it lets go when idle, so that the folder, opened
    /// again, still tells how the last signing ended and which signatures were made in it.
    struct Memory {
        fileprivate let last: Outcome?
        fileprivate let lastOfMethod: [SigningMethod: Outcome]
        fileprivate let methods: [String: SigningMethod]
        var isEmpty: Bool { last == nil && methods.isEmpty }
    }

    var memory: Memory { condition.withLock { Memory(last: last, lastOfMethod: lastOfMethod, methods: methods) } }

    func restore(_ memory: Memory) {
        condition.withLock {
            last = memory.last
            lastOfMethod = memory.lastOfMethod
            methods = memory.methods
        }
    }

    // MARK: - Removing a signature

    /// Claims the mount for removing a signature (EBUSY while a signing runs).
    func beginRemoval(_ action: String) throws {
        try condition.withLock {
            if let running {
                throw claim.failure(EBUSY, "cannot \(action): a \(running.method.rawValue) signing is running")
            }
            try claim.claim("a signature is being removed", for: action)
        }
    }

    // MARK: - What status/ shows

    /// `status/current`: one line.
    var currentText: String {
        condition.withLock {
            if running == nil, let method = pending.values.first {
                return "requested: the \(method.rawValue) signing starts when its request file is closed\n"
            }
            return (running?.state ?? last?.line ?? "idle") + "\n"
        }
    }

    /// `status/mobile-id`, `status/smart-id`, `status/id-card`: the state of a signing with that
    /// method (or how the last one ended, or "idle"), then its verification code (Mobile-ID,
    /// Smart-ID) while the user must compare it with the phone.
    func statusText(of method: SigningMethod) -> String {
        withCardLines(condition.withLock { statusLines(of: method) }, of: method)
    }

    /// `status/<method>` for a reader: while a signing of that method runs and its verification
    /// code is not known yet, blocks until it is or the signing ends, so that a script can read
    /// the code right after its request. `stop` as for `waitForOutcome`.
    func waitForStatus(of method: SigningMethod, stop: () -> Int32?) throws -> String {
        let lines = try condition.withLock { () -> [String] in
            try block(reading: "status/\(method.rawValue)", stop: stop) {
                if running == nil, pending.values.contains(method) { return true }
                guard let running, running.method == method else { return false }
                return running.code == .pending
            }
            return statusLines(of: method)
        }
        return withCardLines(lines, of: method)
    }

    /// The text of `status/<method>`: for the ID card, what the card says replaces the second
    /// line. Read outside `condition`, after handing the FUSE reader role over: card I/O takes
    /// seconds, and nothing else (another status file, a signing's progress) may wait for it.
    private func withCardLines(_ lines: [String], of method: SigningMethod) -> String {
        var lines = lines
        if method == .idCard {
            FuseReader.mayWait()
            lines[1...] = ArraySlice(IDCardStatusLines.read())
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The first two lines of `status/<method>` (the caller holds `condition`).
    private func statusLines(of method: SigningMethod) -> [String] {
        var lines: [String]
        if let running, running.method == method {
            var code = "no verification code"
            if case .shown(let shown, _) = running.code { code = "verification code: \(shown)" }
            if method == .smartID, let link = smartIDQR.link { code = "device link: \(link)" }
            lines = [running.state, code]
        } else {
            lines = [lastOfMethod[method]?.line ?? "idle", "no verification code"]
        }
        return lines
    }

    /// The method of a signature made in this mount.
    func method(ofSignatureIn file: String, id: String?) -> SigningMethod? {
        guard let id else { return nil }
        return condition.withLock { methods[Self.key(file, id)] }
    }

    private static func key(_ file: String, _ id: String) -> String { file + "#" + id }

    // MARK: - Waiting

    /// Blocks until no signing runs and returns how the last one ended (nil: none has run in
    /// this mount). `stop` is asked ten times a second and ends the wait with its errno
    /// (the reader was interrupted, or the mount is going away).
    func waitForOutcome(stop: () -> Int32?) throws -> Outcome? {
        condition.lock()
        defer { condition.unlock() }
        try block(reading: "status/wait", stop: stop) { running != nil || !pending.isEmpty }
        return last
    }

    /// Waits while `busy` holds (the caller holds `condition`): a signing always ends (it is
    /// cancelled at unmount), so the wait is bounded. At most `maximumWaiters` readers at once.
    private func block(reading file: String, stop: () -> Int32?, while busy: () -> Bool) throws {
        guard busy() else { return }
        guard waiters < Self.maximumWaiters else {
            throw claim.failure(EBUSY, "too many readers are waiting in .asicfs/\(file) (at most \(Self.maximumWaiters))")
        }
        waiters += 1
        defer { waiters -= 1 }
        FuseReader.mayWait()
        while busy() {
            if let code = stop() { throw FileSystemError(code) }
            _ = condition.wait(until: Date().addingTimeInterval(0.1))
        }
    }

    /// At unmount: cancels a running signing (network requests stop within about a second) and
    /// waits for its thread, so nothing is half-written when the process ends.
    func cancelAndWait(timeout: TimeInterval = 30) {
        condition.withLock { running?.cancellation.cancel() }
        _ = threads.wait(timeout: .now() + timeout)
    }
}

import ASiC
import Foundation
import Signing
import Validation
import XAdES

/// Validation of the mounted container's signatures for the `status` and `report` files and the
/// `user.asicfs.status` attribute. It runs when first asked for (never at mount time), at most
/// once per snapshot. Requests that must never wait (reading `status`/`report`, getxattr: the
/// trusted list may be a black-holed download) ask `reportIfReady`, which starts the run in the
/// background instead; `report` waits for it (readers that come while it runs wait for that
/// run instead of starting another, holding no lock that other operations need).
final class ValidationCache: @unchecked Sendable {
    private let environment: SignatureEnvironment
    private let condition = NSCondition()
    private var cached: (generation: UInt64, report: ContainerReport)?
    /// The snapshot generation being validated now, if any.
    private var running: UInt64?
    /// The generation queued for a background validation, if any.
    private var queued: UInt64?
    /// Background validations run one at a time for the whole mount: a file manager asks every
    /// container folder it shows, and each may need the network.
    private static let background = DispatchQueue(label: "asicfs.validation")

    init(environment: SignatureEnvironment) { self.environment = environment }

    /// The report of `snapshot` (whose generation is `generation`), validating it if needed.
    func report(for snapshot: Container, generation: UInt64) -> ContainerReport {
        condition.lock()
        while true {
            if let cached, cached.generation == generation {
                condition.unlock()
                return cached.report
            }
            if running == nil { break }
            FuseReader.mayWait()
            condition.wait()
        }
        running = generation
        condition.unlock()
        FuseReader.mayWait()

        // The validator loads the trust store once per mount (trust anchors, trusted lists).
        let report = environment.validator().validate(snapshot)

        condition.withLock {
            running = nil
            if (cached?.generation ?? 0) <= generation { cached = (generation, report) }
            condition.broadcast()
        }
        return report
    }

    /// The report if this generation has been validated already; else nil, and the validation
    /// is queued in the background (once) so that a later call finds it.
    func reportIfReady(for snapshot: Container, generation: UInt64) -> ContainerReport? {
        let start: Bool = condition.withLock {
            if cached?.generation == generation || running == generation || queued == generation { return false }
            queued = generation
            return true
        }
        if let report = cachedReport(generation: generation) { return report }
        if start {
            Self.background.async { [self] in
                _ = report(for: snapshot, generation: generation)
                condition.withLock { if queued == generation { queued = nil } }
            }
        }
        return nil
    }

    /// The report if this generation has been validated already.
    func cachedReport(generation: UInt64) -> ContainerReport? {
        condition.withLock { cached?.generation == generation ? cached?.report : nil }
    }

    /// The report of one signature: matched by its file and Id, else by its place in its file.
    static func signatureReport(for summary: SignatureSummary, position: Int, in report: ContainerReport) -> SignatureReport? {
        let sameFile = report.signatures.filter { $0.file == summary.file }
        if let id = summary.id, let match = sameFile.first(where: { $0.id == id }) { return match }
        return position < sameFile.count ? sameFile[position] : nil
    }
}

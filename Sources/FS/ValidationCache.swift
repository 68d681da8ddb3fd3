import ASiC
import Foundation
import Signing
import Validation
import XAdES

/// Validation of the mounted container's signatures for the `status` and `report` files. It runs
/// when one of them is first opened (never at mount time), at most once per snapshot: readers
/// that come while it runs wait for that run instead of starting another. Only the opening
/// thread waits; no lock that other operations need is held meanwhile. Requests that must never
/// wait (getxattr: the trusted list may be a black-holed download) ask `reportIfReady`, which
/// starts the run in the background instead.
final class ValidationCache: @unchecked Sendable {
    private let environment: SignatureEnvironment
    private let condition = NSCondition()
    private var cached: (generation: UInt64, report: ContainerReport)?
    /// The snapshot generation being validated now, if any.
    private var running: UInt64?

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
    /// starts on a background thread (unless one runs) so that a later call finds it.
    func reportIfReady(for snapshot: Container, generation: UInt64) -> ContainerReport? {
        let start: Bool = condition.withLock {
            if cached?.generation == generation { return false }
            return running == nil
        }
        if let report = cachedReport(generation: generation) { return report }
        if start {
            Thread.detachNewThread { [self] in _ = report(for: snapshot, generation: generation) }
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

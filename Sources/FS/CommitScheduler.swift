import Foundation

/// Decides when changes made through the mount are written to the container: a short moment
/// after the last change (so copying many files in costs one save, not one per file), and never
/// later than `maximumDelay` after the first unsaved change. fsync and unmount commit at once.
final class CommitScheduler: @unchecked Sendable {
    let quietPeriod: TimeInterval
    let maximumDelay: TimeInterval
    private weak var fileSystem: ContainerFileSystem?
    private let queue = DispatchQueue(label: "asicfs.commit")
    private let lock = NSLock()
    private var generation: UInt64 = 0
    private var firstUnsaved: Date?

    init(fileSystem: ContainerFileSystem, quietPeriod: TimeInterval = 0.2, maximumDelay: TimeInterval = 2) {
        self.fileSystem = fileSystem
        self.quietPeriod = quietPeriod
        self.maximumDelay = maximumDelay
    }

    /// Something changed: (re)start the quiet-period timer.
    func changed() {
        let (current, wait) = lock.withLock { () -> (UInt64, TimeInterval) in
            generation += 1
            let now = Date()
            if firstUnsaved == nil { firstUnsaved = now }
            let left = maximumDelay - now.timeIntervalSince(firstUnsaved!)
            return (generation, max(0, min(quietPeriod, left)))
        }
        queue.asyncAfter(deadline: .now() + wait) { [weak self] in self?.fire(current) }
    }

    private func fire(_ scheduled: UInt64) {
        let due = lock.withLock { () -> Bool in
            guard let first = firstUnsaved else { return false }
            let overdue = Date().timeIntervalSince(first) >= maximumDelay
            guard scheduled == generation || overdue else { return false }
            firstUnsaved = nil
            return true
        }
        guard due, let fileSystem else { return }
        // A failure is recorded in status/last-error by commit(); the next change retries.
        try? fileSystem.commit()
    }
}

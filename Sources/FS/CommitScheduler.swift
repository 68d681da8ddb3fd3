import Foundation

/// Decides when changes made through the mount are written to the container: a short moment
/// after the last change (so copying many files in costs one save, not one per file), and never
/// later than `maximumDelay` after the first unsaved change. fsync and unmount commit at once.
final class CommitScheduler: @unchecked Sendable {
    let quietPeriod: TimeInterval
    let maximumDelay: TimeInterval
    private weak var files: DataFiles?
    private let queue = DispatchQueue(label: "asicfs.commit")
    private let lock = NSLock()
    private var lastChange: Date?
    private var firstUnsaved: Date?
    private var timerArmed = false

    init(files: DataFiles, quietPeriod: TimeInterval = 0.2, maximumDelay: TimeInterval = 2) {
        self.files = files
        self.quietPeriod = quietPeriod
        self.maximumDelay = maximumDelay
    }

    /// Something changed: the save is due a quiet period from now. Cheap (a copy-in of many
    /// small files calls it for each): only the first change after a save arms a timer, which
    /// looks at the time of the last change when it fires.
    func changed() {
        let arm = lock.withLock { () -> Bool in
            let now = Date()
            lastChange = now
            if firstUnsaved == nil { firstUnsaved = now }
            if timerArmed { return false }
            timerArmed = true
            return true
        }
        if arm { schedule(after: quietPeriod) }
    }

    private func schedule(after wait: TimeInterval) {
        queue.asyncAfter(deadline: .now() + max(0, wait)) { [weak self] in self?.fire() }
    }

    private func fire() {
        let wait = lock.withLock { () -> TimeInterval? in
            guard let first = firstUnsaved, let last = lastChange else {
                timerArmed = false
                return nil
            }
            let now = Date()
            let quietLeft = quietPeriod - now.timeIntervalSince(last)
            let overdueIn = maximumDelay - now.timeIntervalSince(first)
            if quietLeft > 0 && overdueIn > 0 { return min(quietLeft, overdueIn) }
            firstUnsaved = nil
            lastChange = nil
            timerArmed = false
            return 0
        }
        guard let wait else { return }
        if wait > 0 { return schedule(after: wait) }
        // A failure is recorded in status/last-error by commit(); the next change retries.
        try? files?.commit()
    }
}

import Foundation
import Synchronization

// How the threads of a streaming read or a save hand work to each other.

/// Polls `done`, yielding the core between tries, for up to half a millisecond (longer than a
/// handoff normally waits); whether it came true. A thread that slept at every handoff was
/// mostly woken on its partner's core by the scheduler of this 2-vCPU VM, where the two then
/// ran one at a time, about twice as slow; yielding lets the partner run at once when the two
/// do share a core (another program busy on the other).
enum BriefPoll {
    static func until(_ done: () -> Bool) -> Bool {
        let start = DispatchTime.now().uptimeNanoseconds
        var tries = 0
        while !done() {
            sched_yield()
            tries += 1
            if tries & 15 == 0 && DispatchTime.now().uptimeNanoseconds - start > 500_000 { return done() }
        }
        return true
    }
}

/// A turn that two threads, 0 and 1, hand each other; thread 0 has it first. Taking it polls
/// briefly (`BriefPoll`) before sleeping.
final class Baton: Sendable {
    private let turn = Atomic<Int>(0)
    private let sleepers = Atomic<Int>(0)  // bit i: thread i sleeps (or is about to) on wake[i]
    private let wake = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]

    /// Waits until the turn is `me`'s; everything the passer did before passing is visible then.
    func take(_ me: Int) {
        if BriefPoll.until({ turn.load(ordering: .acquiring) == me }) { return }
        sleep(me)
    }

    func pass(to other: Int) {
        turn.store(other, ordering: .sequentiallyConsistent)
        if stopsSleeping(other) { wake[other].signal() }
    }

    /// Long waits (a slow `body`) sleep. Whoever clears `me`'s sleeper bit decides: the passer
    /// then signals, or this thread saw the turn come and does not wait.
    private func sleep(_ me: Int) {
        sleepers.bitwiseOr(1 << me, ordering: .sequentiallyConsistent)
        if turn.load(ordering: .sequentiallyConsistent) == me && stopsSleeping(me) { return }
        wake[me].wait()
    }

    /// Clears `thread`'s sleeper bit; whether it was set.
    private func stopsSleeping(_ thread: Int) -> Bool {
        sleepers.bitwiseAnd(~(1 << thread), ordering: .sequentiallyConsistent).oldValue & (1 << thread) != 0
    }
}

/// A counting semaphore whose `wait` polls briefly (`BriefPoll`) before it sleeps. `count` is
/// the permits left; below zero, minus the number of sleepers.
final class PollingSemaphore: Sendable {
    private let count = Atomic<Int>(0)
    private let sleepers = DispatchSemaphore(value: 0)

    func signal() {
        if count.add(1, ordering: .sequentiallyConsistent).oldValue < 0 { sleepers.signal() }
    }

    func wait() {
        if BriefPoll.until(takePermit) { return }
        if count.subtract(1, ordering: .sequentiallyConsistent).oldValue <= 0 { sleepers.wait() }
    }

    /// Takes a permit if one is left.
    private func takePermit() -> Bool {
        while true {
            let available = count.load(ordering: .acquiring)
            guard available > 0 else { return false }
            if count.compareExchange(expected: available, desired: available - 1, ordering: .sequentiallyConsistent).exchanged { return true }
        }
    }
}

/// The first error of several threads; later ones are dropped.
final class FirstFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var error: Error?

    var happened: Bool { lock.withLock { error != nil } }

    func record(_ error: Error) {
        lock.withLock { if self.error == nil { self.error = error } }
    }

    func check() throws {
        if let error = lock.withLock({ error }) { throw error }
    }
}

/// A thread that runs one job at a time for a streaming read or a save: `begin(job)`, then
/// `wait()` before the job's memory is reused; `wait` rethrows what the job threw. With nothing
/// begun, `wait` returns at once. The job is handed over with a `Baton` (turn 0: this side's,
/// turn 1: the helper's), whose short polling keeps the two threads on two cores of a 2-vCPU VM
/// (with plain semaphores the scheduler kept both on one, and a two-thread deflate ran little
/// faster than one thread).
final class HelperThread: @unchecked Sendable {
    private let turn = Baton()
    private var job: (() throws -> Void)?
    private var failure: Error?
    private var busy = false
    private var stopping = false

    init() {
        let thread = Thread { [self] in
            while true {
                turn.take(1)
                if stopping { return }
                do { try job?() } catch { failure = error }
                job = nil
                turn.pass(to: 0)
            }
        }
        thread.name = "asicfs-stream"
        thread.start()
    }

    func begin(_ job: @escaping () throws -> Void) {
        self.job = job
        busy = true
        turn.pass(to: 1)
    }

    func wait() throws {
        guard busy else { return }
        turn.take(0)
        busy = false
        if let failure {
            self.failure = nil
            throw failure
        }
    }

    /// Ends the thread (after waiting for a job still running, whose error is dropped).
    func stop() {
        if busy { turn.take(0); busy = false }
        stopping = true
        turn.pass(to: 1)
    }
}

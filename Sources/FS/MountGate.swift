import Foundation

/// What the kernel's requests wait behind while a mount is being checked. A container mount is
/// made before its container is opened and checked (that check runs on its own thread), so
/// that the mount point answers at once; every request but the root folder's attributes then
/// waits here until the check has ended, and gets the checked source, or EIO when the check
/// failed (the mount is then taken away and `asicfs mount` reports why).
final class MountGate: @unchecked Sendable {
    enum State {
        case checking
        case ready(any MountSource)
        case failed(String)
    }

    private let condition = NSCondition()
    private var state: State

    /// A gate that waits for `open(with:)` or `fail(_:)`.
    init() { state = .checking }

    /// An open gate: the source was checked before the mount (browse mode).
    init(ready source: any MountSource) { state = .ready(source) }

    /// The source, once the check has passed (waits until then); EIO when it failed.
    func source() throws -> any MountSource {
        condition.lock()
        defer { condition.unlock() }
        while true {
            switch state {
            case .ready(let source): return source
            case .failed: throw FileSystemError(EIO)
            case .checking:
                FuseReader.mayWait()
                condition.wait()
            }
        }
    }

    /// True while the check runs (the root's attributes are then provisional).
    var isChecking: Bool {
        condition.withLock {
            if case .checking = state { return true }
            return false
        }
    }

    /// Why the check failed (nil while it runs or when it passed).
    var failure: String? {
        condition.withLock {
            if case .failed(let reason) = state { return reason }
            return nil
        }
    }

    func open(with source: any MountSource) { settle(.ready(source)) }

    func fail(_ reason: String) { settle(.failed(reason)) }

    private func settle(_ outcome: State) {
        condition.lock()
        if case .checking = state { state = outcome }
        condition.broadcast()
        condition.unlock()
    }
}

import Foundation
import Glibc

/// The pinentry programs running now, by the thread that started each: a mount's daemon ends
/// the dialog of a decryption it stops (an unmount), which would otherwise stay on the screen,
/// asking for a PIN nobody waits for, after the daemon has gone.
public enum PinentryDialogs {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var running: [ObjectIdentifier: pid_t] = [:]

    static func started(_ pid: pid_t) { lock.withLock { running[ObjectIdentifier(Thread.current)] = pid } }

    static func ended(_ pid: pid_t) {
        lock.withLock { running = running.filter { $0.value != pid } }
    }

    /// Ends the dialog `thread` started, if one is open (its session then fails as closed).
    public static func end(startedBy thread: Thread) {
        lock.withLock {
            if let pid = running[ObjectIdentifier(thread)] { kill(pid, SIGTERM) }
        }
    }
}

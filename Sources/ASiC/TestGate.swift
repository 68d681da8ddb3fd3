import Foundation

/// Test-only gates that make timing windows deterministic instead of relying on sleeps. A gate
/// is named by an environment variable (tests set it; users never need to) and does nothing
/// unless it names a path that exists.
public enum TestGate {
    /// The path an environment variable names, if any.
    public static func path(_ variable: String) -> String? {
        ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// While `gate` exists, waits, with `gate.held` present meanwhile. A test makes the gate,
    /// waits for `.held`, does what must happen in the window, then removes the gate.
    /// `beforeWaiting` runs only when the gate holds.
    public static func hold(_ gate: String?, beforeWaiting: () -> Void = {}) {
        guard let gate, access(gate, F_OK) == 0 else { return }
        beforeWaiting()
        let marker = gate + ".held"
        let fd = open(marker, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        if fd >= 0 { close(fd) }
        while access(gate, F_OK) == 0 { usleep(5_000) }
        unlink(marker)
    }

    /// `ASICFS_TEST_HOLD_DATA=PATH`: a save waits before it writes each new data file.
    static let dataWriteGate = path("ASICFS_TEST_HOLD_DATA")
}

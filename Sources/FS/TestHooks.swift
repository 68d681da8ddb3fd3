import Foundation

/// Test-only hooks that make race windows deterministic instead of relying on sleeps. They do
/// nothing unless the daemon's environment names them (tests set it; users never need to).
enum TestHooks {
    /// `ASICFS_TEST_HOLD_SAVES=PATH`: while PATH exists, every save stops after it has taken
    /// the view it will write and before it writes anything, with `PATH.held` present meanwhile.
    /// A test makes PATH, waits for `PATH.held`, changes the mount, then removes PATH.
    static let saveGate = ProcessInfo.processInfo.environment["ASICFS_TEST_HOLD_SAVES"].flatMap { $0.isEmpty ? nil : $0 }

    /// `ASICFS_TEST_HOLD_MOUNT_CHECK=PATH`: while PATH exists, a container mount's check waits
    /// before it opens the container (the mount is made and answers meanwhile), with
    /// `PATH.held` present.
    static let mountCheckGate = ProcessInfo.processInfo.environment["ASICFS_TEST_HOLD_MOUNT_CHECK"].flatMap { $0.isEmpty ? nil : $0 }

    static func holdSave() { hold(saveGate) }

    static func holdMountCheck() { hold(mountCheckGate) }

    private static func hold(_ path: String?) {
        guard let gate = path, access(gate, F_OK) == 0 else { return }
        FuseReader.mayWait()
        let marker = gate + ".held"
        let fd = open(marker, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        if fd >= 0 { close(fd) }
        while access(gate, F_OK) == 0 { usleep(5_000) }
        unlink(marker)
    }
}

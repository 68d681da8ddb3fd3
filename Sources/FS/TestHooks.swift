import ASiC
import Foundation

/// The daemon's test-only gates (see `TestGate`).
enum TestHooks {
    /// `ASICFS_TEST_HOLD_SAVES=PATH`: while PATH exists, every save stops after it has taken
    /// the view it will write and before it writes anything, with `PATH.held` present meanwhile.
    /// A test makes PATH, waits for `PATH.held`, changes the mount, then removes PATH.
    static let saveGate = TestGate.path("ASICFS_TEST_HOLD_SAVES")

    /// `ASICFS_TEST_HOLD_MOUNT_CHECK=PATH`: while PATH exists, a container mount's check waits
    /// before it opens the container (the mount is made and answers meanwhile), with
    /// `PATH.held` present.
    static let mountCheckGate = TestGate.path("ASICFS_TEST_HOLD_MOUNT_CHECK")

    /// `ASICFS_TEST_REQUEST_LOG=PATH`: a container mount appends the opcode of every FUSE
    /// request it reads to PATH, one per line (what a test counts requests with).
    static let requestLog = TestGate.path("ASICFS_TEST_REQUEST_LOG")

    /// `ASICFS_TEST_HOLD_READS=PATH`: while PATH exists, a container mount reads no request
    /// (they stay queued in the kernel), with `PATH.held` present meanwhile.
    static let readGate = TestGate.path("ASICFS_TEST_HOLD_READS")

    /// `ASICFS_TEST_HOLD_RELEASE=PATH`: while PATH exists, a container mount's reader that has
    /// just read a RELEASE keeps it unserved, with `PATH.held` present meanwhile; a stop (a
    /// signal) ends the wait, so a test can make the stop come between the read and the serving.
    static let releaseGate = TestGate.path("ASICFS_TEST_HOLD_RELEASE")

    /// `ASICFS_TEST_HOLD_CONTAINER_OPEN=PATH`: while PATH exists, browse mode waits before it
    /// opens a container a request enters (after the caller's right to read it was checked),
    /// with `PATH.held` present.
    static let containerOpenGate = TestGate.path("ASICFS_TEST_HOLD_CONTAINER_OPEN")

    /// `ASICFS_TEST_RELEASE_LOG=PATH`: a browse mount appends the relative path of every
    /// container it lets go when idle to PATH, one per line (what a test waits for).
    static let releaseLog = TestGate.path("ASICFS_TEST_RELEASE_LOG")

    /// `ASICFS_TEST_HOLD_SPOOL_COPY=PATH`: while PATH exists, the copy of a stored data file
    /// into a spool (its first change) stops after its first chunk, with `PATH.held` present
    /// (the copy runs outside the view's lock: the rest of the mount answers meanwhile).
    static let spoolCopyGate = TestGate.path("ASICFS_TEST_HOLD_SPOOL_COPY")

    /// `ASICFS_TEST_HOLD_CARD_STATUS=PATH`: while PATH exists, reading `status/id-card` waits
    /// before it asks the card (as a slow card would), with `PATH.held` present.
    static let cardStatusGate = TestGate.path("ASICFS_TEST_HOLD_CARD_STATUS")

    /// `ASICFS_TEST_HOLD_SEAL=PATH`: while PATH exists, a seal waits after the container's
    /// bytes are written and synced and before they get the container's name, with `PATH.held`
    /// present (a test kills the daemon there: nothing may be left).
    static let sealGate = TestGate.path("ASICFS_TEST_HOLD_SEAL")

    static func holdSave() { hold(saveGate) }

    static func beforeSealLink() { hold(sealGate) }

    static func holdCardStatus() { hold(cardStatusGate) }

    static func holdSpoolCopy() { hold(spoolCopyGate) }

    static func holdContainerOpen() { hold(containerOpenGate) }

    static func noteReleased(_ relative: String) {
        guard let releaseLog else { return }
        let fd = open(releaseLog, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let line = Array((relative + "\n").utf8)
        _ = write(fd, line, line.count)
        close(fd)
    }

    static func holdMountCheck() { hold(mountCheckGate) }

    private static func hold(_ path: String?) {
        TestGate.hold(path, beforeWaiting: FuseReader.mayWait)
    }
}

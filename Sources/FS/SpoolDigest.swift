import ASiC
import Foundation

/// The CRC-32 and SHA-256 of a spool file, computed on a background queue while a copy-in
/// writes it front to back: the copy keeps one core busy, the other hashes what has arrived
/// (read back from the page cache), so the save after it need not compute SHA-256 (which a
/// signing of the file reuses) on top of deflating. Only a file written strictly in order
/// qualifies; any write that is not at the end of what came before, a truncation, or a failed
/// write gives the digest up, and the save hashes as it always did. The save also takes it only
/// when its own CRC-32 of the bytes it wrote agrees (`ZipWriter.write(known:)`).
final class SpoolDigest: ContentDigestSource, @unchecked Sendable {
    private static let queue = DispatchQueue(label: "asicfs-spool-digest", qos: .utility)
    /// Hashed in steps of this size, so the background work trails the writes closely.
    static let step = 1 << 20

    private let lock = NSLock()
    // Under `lock`: how far the bytes were written in order, whether that still holds, the
    // spool file once there is one, and how far hashing was last asked for.
    private var frontier: Int64 = 0
    private var inOrder = true
    private var fd: Int32 = -1
    private var requested: Int64 = 0
    /// Set once the digest is finished (on `queue`): a later write cannot be added to it.
    private var finished: ContentDigest?
    // On `queue` only.
    private var hashed: Int64 = 0
    private var running = RunningContentDigest()

    deinit { if fd >= 0 { close(fd) } }

    /// After `count` bytes were written at `offset`.
    func wrote(at offset: Int64, count: Int) {
        let hashNow: Bool = lock.withLock {
            guard inOrder, finished == nil else { inOrder = false; return false }
            guard offset == frontier else { inOrder = false; return false }
            frontier += Int64(count)
            guard fd >= 0, frontier - requested >= Int64(Self.step) else { return false }
            requested = frontier
            return true
        }
        if hashNow { Self.queue.async { self.hashWhatArrived(all: false) } }
    }

    /// Any truncation but one that changes nothing gives the digest up.
    func truncated(to length: Int64) {
        lock.withLock { if length != frontier { inOrder = false } }
    }

    /// A write failed: the bytes are not what was sent.
    func giveUp() { lock.withLock { inOrder = false } }

    /// The spool moved from memory into its file: hashing can start (through a descriptor of its own).
    func spilled(to file: PosixFile) {
        let opened = fcntl(file.fd, F_DUPFD_CLOEXEC, 0)
        lock.withLock {
            if opened < 0 { inOrder = false } else { fd = opened }
            requested = frontier
        }
        Self.queue.async { self.hashWhatArrived(all: false) }
    }

    /// The digest of the spool's bytes, if they were written in order and are `size` long
    /// (hashes what is left first; the save calls it once no one writes any more).
    func digest(ofSize size: Int64) -> ContentDigest? {
        Self.queue.sync {
            if lock.withLock({ finished }) == nil {
                hashWhatArrived(all: true)
                let (end, ordered) = lock.withLock { (frontier, inOrder) }
                guard ordered, end == hashed else { return nil }
                let made = running.finish()
                lock.withLock { finished = made }
            }
            return lock.withLock { inOrder && finished?.size == size ? finished : nil }
        }
    }

    /// Hashes whole steps of what has been written in order (everything with `all`). On `queue`.
    private func hashWhatArrived(all: Bool) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.step, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let (end, ordered, file, done) = lock.withLock { (frontier, inOrder, fd, finished != nil) }
            guard ordered, file >= 0, !done else { return }
            let available = end - hashed
            guard available > 0, all || available >= Int64(Self.step) else { return }
            let count = Int(min(Int64(Self.step), available))
            var got = 0
            while got < count {
                let n = pread(file, buffer.baseAddress! + got, count - got, off_t(hashed) + off_t(got))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    giveUp()
                    return
                }
                got += n
            }
            running.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            hashed += Int64(count)
        }
    }
}

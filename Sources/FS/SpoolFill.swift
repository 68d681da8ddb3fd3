import ASiC
import Foundation

/// A stored data file being copied into a new spool so that it can be changed (open for
/// writing without O_TRUNC, truncate to a length above 0). The copy of a large file takes
/// seconds, so it runs outside the view's lock: every other request goes on meanwhile, and a
/// second writer of the same file waits on this fill's own lock only. The spool is put into
/// the view when the copy is complete (`DataFiles.fillSpool`), and only if the file
/// is still the one copied.
final class SpoolFill: @unchecked Sendable {
    let spool: Spool
    /// The snapshot copied from, the file in it, and the view's generation then.
    let base: Container
    let source: DataFile
    let generation: UInt64
    /// Held by the copying thread from the fill's start to its end.
    let lock = NSLock()

    init(spool: Spool, base: Container, source: DataFile, generation: UInt64) {
        self.spool = spool
        self.base = base
        self.source = source
        self.generation = generation
    }

    /// Copies the file's bytes into the spool (the spool is nobody else's yet: no lock needed).
    func copy() throws {
        var offset: Int64 = 0
        try base.read(source.name) { chunk in
            try spool.write(chunk, at: offset)
            offset += Int64(chunk.count)
            // The test hook holds the copy once, after its first chunk (of a file with more).
            if offset == Int64(chunk.count), offset < source.size { TestHooks.holdSpoolCopy() }
        }
    }

    /// Waits until the fill has ended (published or not).
    func waitUntilDone() {
        FuseReader.mayWait()
        lock.lock()
        lock.unlock()
    }
}

import CLinux
import Foundation
import Synchronization

/// Sequential reads of a range of a file, served from a few chunks that threads of their own
/// read ahead with O_DIRECT, past the page cache.
///
/// Why not the page cache: an entry read through the mount is cached twice, once as the
/// container file's pages and once as the mounted file's, so every byte costs two freshly
/// allocated pages and a copy more. Fresh pages are what is slow on a VM that hands freed memory
/// back to its host (virtio-balloon free page reporting, as on this machine): a cold `dd` of the
/// 1 GiB container read 340–360 MB/s when it started 5 s after the page cache was dropped and
/// 1.8 GB/s when it started at once; with O_DIRECT (1 MiB reads) 1.6–1.8 GB/s either way.
/// Here the container's bytes land in a few buffers that are used again and again, and the
/// disk works on the next chunks while the kernel copies the current one.
///
/// Reads outside the window (behind it, or further ahead than it reaches) are not served: the
/// caller reads those itself, as it does when the file system refuses O_DIRECT.
final class DirectReadAhead: @unchecked Sendable {
    /// How a stream reads: its chunks, how far ahead of the furthest one asked for, and how many
    /// at once (one thread each).
    struct Shape: Sendable {
        let chunkSize: Int
        let chunksAhead: Int
        let readsAtOnce: Int

        /// Stored entries, whose bytes are served as they are. Three chunks ahead: with one, a
        /// cold 1 GiB read through the mount ran 0.6–1.3 GB/s, with three 0.8–1.4 (eight were
        /// no faster). Two reads at once: a cold O_DIRECT read of the container in 1 MiB reads
        /// ran 1.2–1.6 GB/s one at a time, 1.5–1.7 GB/s two at a time.
        static let stored = Shape(chunkSize: 1 << 20, chunksAhead: 3, readsAtOnce: 2)
        /// A deflated entry's compressed bytes: the decoder takes them at a third of its output
        /// rate, and the inflating reader's own buffers count against the daemon's memory (W5).
        static let compressed = Shape(chunkSize: 256 << 10, chunksAhead: 2, readsAtOnce: 1)
    }

    /// At most this many streams at once (each holds up to `chunksAhead` + 2 chunks).
    static let maximumStreams = 4
    private static let streams = Atomic<Int>(0)
    /// Streams whose threads still run.
    static var activeStreams: Int { streams.load(ordering: .relaxed) }

    enum Start {
        case started(DirectReadAhead)
        /// `maximumStreams` run already: try again later.
        case busy
        /// The file cannot be read with O_DIRECT (or reopened): no use trying again.
        case unsupported
    }

    private let fd: Int32
    private let end: Int64
    let shape: Shape
    private var chunkSize: Int { shape.chunkSize }
    private let lastChunk: Int64
    private let condition = NSCondition()
    /// Chunk index -> its bytes (the count is short only at the end of the file).
    private var chunks: [Int64: (bytes: UnsafeMutableRawPointer, count: Int)] = [:]
    private var spare: [UnsafeMutableRawPointer] = []
    private var reading: Set<Int64> = []
    private var threads = 0
    /// The furthest chunk a read asked for; the window is furthest - 1 ... furthest + chunksAhead.
    private var furthest: Int64
    private var closed = false
    private var failed = false
    private var served = 0

    /// Starts reading `range` of `file` ahead from `position`. `reopen` gives a descriptor of the
    /// same file opened with O_DIRECT, or -1 (tests pass one that fails).
    static func start(file: PosixFile, range: Range<Int64>, at position: Int64, shape: Shape = .stored,
                      reopen: (PosixFile) -> Int32 = reopenDirect) -> Start {
        guard streams.add(1, ordering: .relaxed).newValue <= maximumStreams else {
            streams.subtract(1, ordering: .relaxed)
            return .busy
        }
        let fd = reopen(file)
        guard fd >= 0 else {
            streams.subtract(1, ordering: .relaxed)
            return .unsupported
        }
        let stream = DirectReadAhead(fd: fd, end: range.upperBound, at: position, shape: shape)
        stream.threads = shape.readsAtOnce
        for _ in 0..<shape.readsAtOnce {
            let thread = Thread { stream.run() }
            thread.name = "asicfs-readahead"
            thread.start()
        }
        return .started(stream)
    }

    private init(fd: Int32, end: Int64, at position: Int64, shape: Shape) {
        self.fd = fd
        self.end = end
        self.shape = shape
        lastChunk = max(0, end - 1) / Int64(shape.chunkSize)
        furthest = position / Int64(shape.chunkSize)
    }

    /// The same file as `file`, opened again with O_DIRECT (through /proc, so that a file
    /// renamed or replaced meanwhile is still this one); -1 when that is refused.
    static func reopenDirect(_ file: PosixFile) -> Int32 {
        let fd = open("/proc/self/fd/\(file.fd)", O_RDONLY | O_CLOEXEC | clinux_o_direct())
        guard fd >= 0 else { return -1 }
        var reopened = stat()
        guard let original = try? file.status(), fstat(fd, &reopened) == 0,
              reopened.st_dev == original.st_dev, reopened.st_ino == original.st_ino else {
            Glibc.close(fd)
            return -1
        }
        return fd
    }

    /// Reads served from the chunks so far.
    var servedReads: Int { condition.withLock { served } }

    /// Fills `target` from file offset `position` out of the chunks, waiting for those being
    /// read; false when the bytes are not in the window (or the stream failed or was closed):
    /// the caller then reads them itself.
    func read(into target: UnsafeMutableRawBufferPointer, at position: Int64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        var copied = 0
        while copied < target.count {
            let at = position + Int64(copied)
            let index = at / Int64(chunkSize)
            guard index >= furthest - 1, index <= furthest + Int64(shape.chunksAhead) else { return false }
            if index > furthest { advance(to: index) }
            // Behind the furthest chunk only what is still kept; from it on, the thread reads it.
            if index < furthest && chunks[index] == nil { return false }
            while chunks[index] == nil {
                if closed || failed { return false }
                condition.wait()
            }
            if closed { return false }
            let chunk = chunks[index]!
            let within = Int(at - index * Int64(chunkSize))
            let count = min(target.count - copied, chunk.count - within)
            guard count > 0 else { return false }
            (target.baseAddress! + copied).copyMemory(from: chunk.bytes + within, byteCount: count)
            copied += count
        }
        served += 1
        return true
    }

    /// Ends the stream: its threads end once their reads in progress return, the last one
    /// frees the chunks.
    func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
    }

    private func advance(to index: Int64) {
        furthest = index
        for (old, chunk) in chunks where old < index - 1 {
            chunks[old] = nil
            spare.append(chunk.bytes)
        }
        condition.broadcast()
    }

    private func run() {
        condition.lock()
        while !closed {
            guard !failed, let next = nextToRead() else {
                condition.wait()
                continue
            }
            guard let buffer = spare.popLast() ?? Self.allocateChunk(chunkSize) else {
                failed = true
                continue
            }
            reading.insert(next)
            condition.unlock()
            let count = readChunk(next, into: buffer)
            condition.lock()
            reading.remove(next)
            if count < 0 {
                failed = true
                spare.append(buffer)
            } else if next >= furthest - 1 {
                chunks[next] = (buffer, count)
            } else {
                spare.append(buffer)  // the reader moved on meanwhile
            }
            condition.broadcast()
        }
        threads -= 1
        guard threads == 0 else {
            condition.unlock()
            return
        }
        for chunk in chunks.values { free(chunk.bytes) }
        for buffer in spare { free(buffer) }
        chunks = [:]
        spare = []
        condition.unlock()
        Glibc.close(fd)
        Self.streams.subtract(1, ordering: .relaxed)
    }

    /// The first chunk of the window not read (nor being read) yet, from the furthest one on.
    private func nextToRead() -> Int64? {
        let last = min(furthest + Int64(shape.chunksAhead), lastChunk)
        var index = furthest
        while index <= last {
            if chunks[index] == nil && !reading.contains(index) { return index }
            index += 1
        }
        return nil
    }

    /// One chunk (the last one up to the end of the range, rounded up to whole 4 KiB blocks):
    /// its byte count, or -1 on an error (the caller's own read then reports it).
    private func readChunk(_ index: Int64, into buffer: UnsafeMutableRawPointer) -> Int {
        let start = index * Int64(chunkSize)
        let length = Int(min(Int64(chunkSize), (end - start + 4095) & ~4095))
        while true {
            let n = pread(fd, buffer, length, off_t(start))
            if n >= 0 { return n }
            if errno != EINTR { return -1 }
        }
    }

    /// 4 KiB alignment satisfies O_DIRECT on every block size up to a page. Without memory the
    /// stream fails and its reader reads for itself.
    private static func allocateChunk(_ size: Int) -> UnsafeMutableRawPointer? {
        var buffer: UnsafeMutableRawPointer?
        return posix_memalign(&buffer, 4096, size) == 0 ? buffer : nil
    }
}

/// Starts read-ahead streams over one container file, and stops trying once its file system
/// has refused O_DIRECT.
final class DirectReads: Sendable {
    let file: PosixFile
    private let reopen: @Sendable (PosixFile) -> Int32
    private let unsupported = Atomic<Bool>(false)

    /// `reopen`: see `DirectReadAhead.start` (tests pass one that fails).
    init(file: PosixFile, reopen: @escaping @Sendable (PosixFile) -> Int32 = DirectReadAhead.reopenDirect) {
        self.file = file
        self.reopen = reopen
    }

    /// A stream over `range` (file offsets) from `position`, or nil (O_DIRECT refused, or
    /// enough streams run already).
    func stream(over range: Range<Int64>, from position: Int64,
                shape: DirectReadAhead.Shape = .stored) -> DirectReadAhead? {
        guard !unsupported.load(ordering: .relaxed) else { return nil }
        switch DirectReadAhead.start(file: file, range: range, at: position, shape: shape, reopen: reopen) {
        case .started(let stream): return stream
        case .busy: return nil
        case .unsupported:
            unsupported.store(true, ordering: .relaxed)
            return nil
        }
    }
}

import Foundation
import Synchronization

/// One open file's reads of a deflated entry.
///
/// The kernel reads an open file front to back in readahead requests (128 KiB to 1 MiB) that
/// several FUSE threads serve at once, so they arrive slightly out of order. A reader keeps its
/// own decoder at the furthest offset read and the last `windowChunks` chunks of its output:
/// a request inside that window is a copy, one at or a little past its end decodes forward, and
/// only a request before the window or far past it goes to the entry's shared seek index
/// (`DeflatedEntryContent.read`, which may restart a decoder from a checkpoint).
///
/// For entries of `aheadThreshold` and more the decoder runs on a helper thread
/// (`InflatePipeline`) that inflates ahead into free chunk buffers while the kernel copies out
/// the previous ones; buffers go back and forth through two single-producer rings signalled by
/// semaphores, so neither side waits on a lock the other holds while it works.
final class DeflatedEntryReader: EntryReader, @unchecked Sendable {
    static let chunkSize = 512 << 10
    /// Chunks of recent output kept for requests that arrive late.
    static let windowChunks = 4
    /// Chunk buffers in all: the window plus what the helper may inflate ahead.
    static let bufferCount = 8
    /// Entries from this size on inflate ahead on a helper thread.
    static let aheadThreshold: Int64 = 4 << 20
    /// A request this far past the furthest offset read still counts as sequential.
    static let sequentialReach: Int64 = 4 << 20
    /// Larger requests go to the content directly (the window is sized for FUSE's 1 MiB).
    static let largestWindowRead = 1 << 20

    let content: DeflatedEntryContent
    var size: Int64 { content.size }
    private let lock = NSLock()
    private var window: [InflatePipeline.Chunk] = []
    private var pipeline: InflatePipeline?
    private var closed = false

    init(content: DeflatedEntryContent) { self.content = content }

    deinit { pipeline?.stop() }

    /// Requests served from the window or by decoding forward (for tests).
    private(set) var sequentialReads = 0

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        guard offset >= 0 else { return 0 }
        let count = Int(max(0, min(Int64(buffer.count), size - offset)))
        if count == 0 || count > Self.largestWindowRead { return try content.read(into: buffer, at: offset) }
        try content.integrity.checkUsable()
        let served = try lock.withLock { () throws -> Bool in
            if copyFromWindow(into: buffer, at: offset, count: count) { sequentialReads += 1; return true }
            guard !closed, isSequential(offset) else { return false }
            try fill(through: offset + Int64(count), reading: offset)
            guard copyFromWindow(into: buffer, at: offset, count: count) else { return false }
            sequentialReads += 1
            return true
        }
        if served {
            // Damage found meanwhile (by the helper, or another reader) fails this read too.
            try content.integrity.checkUsable()
            return count
        }
        return try content.read(into: buffer, at: offset)
    }

    func close() {
        lock.withLock {
            closed = true
            dropPipeline()
        }
    }

    private var windowEnd: Int64 { window.last?.end ?? 0 }

    /// Whether a request at `offset` continues this reader's stream (the caller holds `lock`).
    private func isSequential(_ offset: Int64) -> Bool {
        // A fresh reader starts at the beginning: the kernel's first requests are near it.
        guard let first = window.first else { return pipeline == nil && offset < Int64(Self.chunkSize) * 2 }
        return offset >= first.offset && offset <= windowEnd + Self.sequentialReach
    }

    /// Copies from the window if it holds all of `offset ..< offset + count`.
    private func copyFromWindow(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, count: Int) -> Bool {
        guard let first = window.first, offset >= first.offset, offset + Int64(count) <= windowEnd else { return false }
        var index = window.lastIndex { $0.offset <= offset }!
        var position = offset
        var copied = 0
        while copied < count {
            let chunk = window[index]
            let start = Int(position - chunk.offset)
            let n = min(chunk.count - start, count - copied)
            (buffer.baseAddress! + copied).copyMemory(from: chunk.buffer.baseAddress! + start, byteCount: n)
            copied += n
            position += Int64(n)
            index += 1
        }
        return true
    }

    /// Takes chunks from the decoder until the window reaches `end` (the caller holds `lock`).
    private func fill(through end: Int64, reading offset: Int64) throws {
        while windowEnd < end {
            if pipeline == nil {
                let start = windowEnd
                pipeline = try InflatePipeline(content: content, start: start,
                                               threaded: size - start >= Self.aheadThreshold
                                                   && ProcessInfo.processInfo.activeProcessorCount > 1)
            }
            let chunk: InflatePipeline.Chunk
            do {
                chunk = try pipeline!.next()
            } catch {
                dropPipeline()
                throw content.integrity.fail(error)
            }
            window.append(chunk)
            while window.count > Self.windowChunks, window[0].end <= offset {
                pipeline!.release(window.removeFirst())
            }
        }
    }

    /// Ends the decoder and forgets the window (its buffers belong to the pipeline).
    private func dropPipeline() {
        pipeline?.stop()
        pipeline = nil
        window = []
    }
}

/// A decoder that produces one entry's output in order, in chunks, from `start` on: on a helper
/// thread that works ahead (`threaded`), or on the caller's thread when asked for the next chunk.
///
/// Buffers move through two rings without a shared lock: the producer takes free buffers (ring
/// `free`, counted by `freeSignal`) and publishes filled ones (ring `ready`, counted by
/// `readySignal`); the consumer takes filled ones and gives them back. Each ring slot is written
/// by one side and read by the other only after the semaphore that orders the two.
final class InflatePipeline: @unchecked Sendable {
    struct Chunk {
        let offset: Int64
        let buffer: UnsafeMutableRawBufferPointer
        let count: Int
        var end: Int64 { offset + Int64(count) }
    }

    private enum Produced {
        case chunk(Chunk)
        case failed(Error)
    }

    let content: DeflatedEntryContent
    let threaded: Bool
    private let memory: UnsafeMutableRawBufferPointer
    private let capacity = DeflatedEntryReader.bufferCount + 1
    private let ready: UnsafeMutablePointer<Produced?>
    private let free: UnsafeMutablePointer<UnsafeMutableRawBufferPointer?>
    // Ring positions: each is moved by one side only.
    private var readyIn = 0, readyOut = 0, freeIn = 0, freeOut = 0
    private let readySignal = PollingSemaphore()
    private let freeSignal = PollingSemaphore()
    private let stopping = Atomic<Bool>(false)
    // The producer's alone.
    private var cursor: DeflatedEntryContent.Cursor?
    private var position: Int64

    init(content: DeflatedEntryContent, start: Int64, threaded: Bool) throws {
        self.content = content
        self.threaded = threaded
        position = start
        let chunk = DeflatedEntryReader.chunkSize
        memory = .allocate(byteCount: chunk * DeflatedEntryReader.bufferCount, alignment: 64)
        ready = .allocate(capacity: capacity)
        ready.initialize(repeating: nil, count: capacity)
        free = .allocate(capacity: capacity)
        free.initialize(repeating: nil, count: capacity)
        for index in 0..<DeflatedEntryReader.bufferCount {
            free[freeIn % capacity] = UnsafeMutableRawBufferPointer(rebasing: memory[index * chunk..<(index + 1) * chunk])
            freeIn += 1
            if threaded { freeSignal.signal() }
        }
        if threaded {
            let thread = Thread { [self] in run() }
            thread.name = "asicfs-inflate"
            thread.start()
        }
    }

    deinit {
        ready.deinitialize(count: capacity)
        ready.deallocate()
        free.deinitialize(count: capacity)
        free.deallocate()
        memory.deallocate()
    }

    /// The next chunk in order (waiting for the helper, or decoding it now); throws what the
    /// decoder threw (then the pipeline is done).
    func next() throws -> Chunk {
        let item: Produced
        if threaded {
            readySignal.wait()
            item = ready[readyOut % capacity]!
            ready[readyOut % capacity] = nil
            readyOut += 1
        } else {
            let buffer = free[freeOut % capacity]!
            freeOut += 1
            item = produce(into: buffer)
        }
        switch item {
        case .chunk(let chunk): return chunk
        case .failed(let error): throw error
        }
    }

    /// Gives a chunk's buffer back for more output.
    func release(_ chunk: Chunk) {
        free[freeIn % capacity] = chunk.buffer
        freeIn += 1
        if threaded { freeSignal.signal() }
    }

    /// Ends the helper after the chunk it is decoding (its memory goes when both sides let go).
    func stop() {
        stopping.store(true, ordering: .releasing)
        if threaded { freeSignal.signal() }
    }

    private func run() {
        while position < content.size {
            freeSignal.wait()
            if stopping.load(ordering: .acquiring) { break }
            let buffer = free[freeOut % capacity]!
            freeOut += 1
            let item = produce(into: buffer)
            ready[readyIn % capacity] = item
            readyIn += 1
            readySignal.signal()
            if case .failed = item { return }
        }
        // A decoder that is still good serves the next reader of this entry.
        if let cursor {
            content.stopReadingAhead(cursor)
            if !cursor.finished { content.giveBack(cursor) }
        }
        cursor = nil
    }

    private func produce(into buffer: UnsafeMutableRawBufferPointer) -> Produced {
        let n = Int(min(Int64(buffer.count), content.size - position))
        do {
            if cursor == nil {
                let taken = try content.takeCursor(for: position)
                cursor = taken
                // A helper streams the entry: its input is read ahead (on the caller's thread
                // the decoder serves any request, in order or not, and reads as it goes).
                if threaded { content.readAhead(taken) }
                try content.skip(taken, to: position)
            }
            try content.decode(cursor!, count: n, into: buffer.baseAddress)
        } catch {
            if let cursor { content.stopReadingAhead(cursor) }
            cursor = nil
            return .failed(content.integrity.fail(error))
        }
        let chunk = Chunk(offset: position, buffer: buffer, count: n)
        position += Int64(n)
        return .chunk(chunk)
    }
}

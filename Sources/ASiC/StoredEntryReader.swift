import Foundation

/// One open file's reads of a stored entry. While they run sequentially through a large entry,
/// a `DirectReadAhead` serves them (O_DIRECT, chunks read ahead); a reader that seeks about
/// reads the container directly (through the page cache, which suits small random reads), and
/// gets a new stream when it reads sequentially again.
final class StoredEntryReader: EntryReader, @unchecked Sendable {
    /// Reads this close to where the furthest one ended count as sequential: the kernel sends
    /// an open file's readahead as several requests at once, which may arrive out of order.
    static let tolerance: Int64 = 1 << 20
    /// A stream starts on the third sequential read (a program that reads a file's first
    /// bytes, as a thumbnailer does, makes one or two), and only with this much left to read
    /// (less is not worth a thread and its chunks).
    static let sequentialReadsBeforeStream = 3
    static let minimumStream: Int64 = 8 << 20

    let content: StoredEntryContent
    private let lock = NSLock()
    private var expected: Int64 = 0
    private var sequentialReads = 0
    private var stream: DirectReadAhead?
    private var servedByEndedStreams = 0
    private var closed = false

    init(content: StoredEntryContent) { self.content = content }

    deinit { stream?.close() }

    var size: Int64 { content.size }

    /// Reads served from read-ahead chunks so far (the tests' way to see the streams work).
    var readsFromStreams: Int {
        lock.withLock { servedByEndedStreams + (stream?.servedReads ?? 0) }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let stream = lock.withLock { streamFor(offset, count: buffer.count) }
        return try content.read(into: buffer, at: offset, through: stream)
    }

    func close() {
        lock.withLock {
            closed = true
            endStream()
        }
    }

    private func streamFor(_ offset: Int64, count: Int) -> DirectReadAhead? {
        if abs(offset - expected) <= Self.tolerance {
            sequentialReads += 1
            expected = max(expected, offset + Int64(count))
        } else {
            sequentialReads = 1
            expected = offset + Int64(count)
            endStream()
        }
        if stream == nil, !closed, sequentialReads >= Self.sequentialReadsBeforeStream, size - offset >= Self.minimumStream {
            stream = content.readAhead(from: offset)
        }
        return stream
    }

    private func endStream() {
        guard let ended = stream else { return }
        ended.close()
        servedByEndedStreams += ended.servedReads
        stream = nil
    }
}

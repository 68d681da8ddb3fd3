import Foundation
import Synchronization

/// Random access into a deflated entry without restarting from the beginning.
///
/// Deflate streams cannot be entered in the middle, so as the entry is decoded the first time
/// we record checkpoints (the zlib "zran" technique): a checkpoint is the decoder's whole saved
/// state (`Inflater.savedState`: ISA-L's bit buffer, block state, Huffman tables and its last
/// 32 KiB of output) and the input position it had reached, so it can be taken anywhere, not
/// only at block boundaries. A read at offset X then starts from the checkpoint at or before X,
/// so it inflates at most one checkpoint spacing of data. Saved states are kept deflated (about
/// 17 KiB each on text, at ISA-L's quickest level) and the spacing grows with the entry so the
/// index stays small (at most about 1,024 checkpoints, 1 MiB apart in a 1 GiB entry, and never
/// more than `windowBudget` bytes: past that every other checkpoint is dropped). A few idle decoders ("cursors") are kept so reads that continue where
/// an earlier one stopped just go on; a cursor is used by one read at a time, outside the lock,
/// so reads of different parts run in parallel.
///
/// An open file reads through its own `DeflatedEntryReader` (`makeReader`), which keeps its own
/// decoder at the furthest offset read, with the last few hundred KiB of output, and for large
/// entries inflates ahead on a helper thread: sequential readers never restart a decoder, even
/// when the kernel's readahead requests arrive out of order.
///
/// Every byte a cursor produces goes into the entry's one CRC-32 check (`EntryIntegrity`): the
/// output is produced front to back across cursors (a new cursor starts at a checkpoint, inside
/// what was produced already), so whichever read first reaches the end completes the check, and
/// once the entry is known to be damaged no read of it succeeds again.
final class DeflatedEntryContent: EntryContent, @unchecked Sendable {
    let file: PosixFile
    let location: EntryLocation
    var size: Int64 { location.uncompressedSize }

    private struct Checkpoint {
        let output: Int64
        let input: Int64
        /// The decoder's saved state, deflated (empty: the start of the stream).
        let state: [UInt8]
    }

    /// One decoder and where it is. Used by one thread at a time (whoever took it).
    final class Cursor {
        let inflater: Inflater
        var output: Int64
        var inputNext: Int64          // offset (in the compressed data) of the next byte to load
        var finished = false
        var lastUse: UInt64 = 0
        let inputBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        /// Compressed input read ahead with O_DIRECT while a pipeline streams this cursor
        /// (`InflatePipeline`); nil otherwise.
        var readAhead: DirectReadAhead?
        /// Where skipped output goes (made when first needed).
        var discard: UnsafeMutableRawBufferPointer?

        init(inflater: Inflater, output: Int64, inputNext: Int64) {
            self.inflater = inflater
            self.output = output
            self.inputNext = inputNext
        }

        /// Moves an unused cursor to a saved state (reusing its memory).
        func resume(from saved: UnsafeRawBufferPointer, output: Int64, inputNext: Int64) throws {
            try inflater.resume(from: saved)
            self.output = output
            self.inputNext = inputNext
            finished = false
        }

        deinit {
            readAhead?.close()
            inputBuffer.deallocate()
            discard?.deallocate()
        }
    }

    private let lock = NSLock()
    let integrity: EntryIntegrity
    private var checkpoints: [Checkpoint]
    private var indexedThrough: Int64 = 0
    private var idle: [Cursor] = []
    /// A cursor dropped from `idle`, kept to be moved to the next checkpoint a read needs (random
    /// reads would otherwise allocate some 200 KiB of decoder and buffers each).
    private var spare: Cursor?
    private var useCounter: UInt64 = 0
    private var spacing: Int64
    private var stateBytes = 0
    /// Memory the checkpoints' saved states may take (a daemon reading a 1 GiB entry stays
    /// under 40 MiB).
    static let windowBudget = 20 << 20
    private static let maxIdleCursors = 4
    /// Made when the first checkpoint is saved or restored (most entries never need them).
    private var stateCompressor: Deflater?
    private var stateDecoder: Inflater?
    private var savedState: [UInt8] = []
    private var restoreBuffer: UnsafeMutableRawBufferPointer?

    private let directReads: DirectReads
    private let readsAhead = Atomic<Int>(0)
    /// Pieces of compressed input that came from read-ahead streams (for tests).
    var compressedReadsFromStreams: Int { readsAhead.load(ordering: .relaxed) }

    init(file: PosixFile, location: EntryLocation, directReads: DirectReads) {
        self.file = file
        self.location = location
        self.directReads = directReads
        spacing = max(512 << 10, location.uncompressedSize / 1024)
        checkpoints = [Checkpoint(output: 0, input: 0, state: [])]
        integrity = EntryIntegrity(location)
    }

    deinit { restoreBuffer?.deallocate() }

    /// Bytes of memory the index holds now (for benchmarks and diagnostics).
    var indexMemory: Int {
        lock.lock(); defer { lock.unlock() }
        return checkpoints.reduce(0) { $0 + $1.state.capacity + 32 }
    }

    /// Checkpoints recorded so far (for tests).
    var checkpointCount: Int { lock.withLock { checkpoints.count } }

    /// Cursors restarted from a checkpoint other than the start so far (for tests and benchmarks).
    private(set) var restarts = 0

    func makeReader() -> EntryReader { DeflatedEntryReader(content: self) }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        guard offset >= 0 else { return 0 }
        let count = Int(max(0, min(Int64(buffer.count), size - offset)))
        // An empty entry is read at once: its stream must end at once and its CRC match.
        if count == 0 && (size > 0 || offset != 0) { return 0 }
        try integrity.checkUsable()
        let cursor = try takeCursor(for: offset)
        do {
            try skip(cursor, to: offset)
            try decode(cursor, count: count, into: count > 0 ? buffer.baseAddress : nil)
        } catch {
            throw integrity.fail(error)
        }
        giveBack(cursor)
        return count
    }

    /// Decodes (and discards) output until the cursor is at `offset`.
    func skip(_ cursor: Cursor, to offset: Int64) throws {
        if cursor.output < offset { try decode(cursor, count: Int(offset - cursor.output), into: nil) }
    }

    /// A decoder at or before `offset`, for the caller alone: the idle cursor closest before it,
    /// or a new one from the checkpoint closest before it.
    func takeCursor(for offset: Int64) throws -> Cursor {
        try lock.withLock {
            useCounter += 1
            let checkpoint = checkpoints[indexOfCheckpoint(atOrBefore: offset)]
            if let best = idle.indices.filter({ idle[$0].output <= offset && !idle[$0].finished })
                .max(by: { idle[$0].output < idle[$1].output }), idle[best].output >= checkpoint.output {
                return idle.remove(at: best)
            }
            return try restore(checkpoint)
        }
    }

    /// Starts reading `cursor`'s compressed input ahead with O_DIRECT (see `DirectReadAhead`:
    /// the compressed bytes are then not cached, only the output the kernel keeps), unless
    /// less than eight of its chunks are left. `stopReadingAhead` ends it.
    func readAhead(_ cursor: Cursor) {
        guard cursor.readAhead == nil,
              location.compressedSize - cursor.inputNext >= Int64(DirectReadAhead.Shape.compressed.chunkSize) * 8 else { return }
        let range = location.dataOffset..<location.dataOffset + location.compressedSize
        cursor.readAhead = directReads.stream(over: range, from: location.dataOffset + cursor.inputNext,
                                              shape: .compressed)
    }

    func stopReadingAhead(_ cursor: Cursor) {
        cursor.readAhead?.close()
        cursor.readAhead = nil
    }

    /// Returns a cursor to the idle set (the caller took it and it is still good).
    func giveBack(_ cursor: Cursor) {
        lock.withLock {
            cursor.lastUse = useCounter
            if idle.count >= Self.maxIdleCursors,
               let oldest = idle.indices.min(by: { idle[$0].lastUse < idle[$1].lastUse }) {
                spare = idle.remove(at: oldest)
            }
            idle.append(cursor)
        }
    }

    /// A new cursor at a checkpoint (the caller holds `lock`).
    private func restore(_ checkpoint: Checkpoint) throws -> Cursor {
        guard !checkpoint.state.isEmpty else {
            return Cursor(inflater: try Inflater(), output: checkpoint.output, inputNext: checkpoint.input)
        }
        restarts += 1
        if stateDecoder == nil { stateDecoder = try Inflater() }
        if restoreBuffer == nil {
            restoreBuffer = .allocate(byteCount: Inflater.maximumSavedSize, alignment: 16)
        }
        return try checkpoint.state.withUnsafeBytes { packed -> Cursor in
            guard let n = stateDecoder!.inflateWhole(packed, into: restoreBuffer!) else {
                throw ContainerError.dataMismatch(location.name, reason: "the seek index is damaged")
            }
            let saved = UnsafeRawBufferPointer(rebasing: restoreBuffer![0..<n])
            do {
                if let reused = spare {
                    spare = nil
                    try reused.resume(from: saved, output: checkpoint.output, inputNext: checkpoint.input)
                    return reused
                }
                return Cursor(inflater: try Inflater(resuming: saved), output: checkpoint.output, inputNext: checkpoint.input)
            } catch is InflateError {
                throw ContainerError.dataMismatch(location.name, reason: "the seek index is damaged")
            }
        }
    }

    private func indexOfCheckpoint(atOrBefore offset: Int64) -> Int {
        var low = 0, high = checkpoints.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if checkpoints[mid].output <= offset { low = mid } else { high = mid - 1 }
        }
        return low
    }

    /// Inflates `count` bytes from the cursor into `destination` (or discards them when nil),
    /// recording checkpoints when the cursor is at the edge of what is indexed. The caller owns
    /// the cursor; this takes `lock` only to look at and extend the index.
    func decode(_ cursor: Cursor, count: Int, into destination: UnsafeMutableRawPointer?) throws {
        let inflater = cursor.inflater
        var remaining = count
        while remaining > 0 {
            var loaded = 0
            if inflater.inputLeft == 0 { loaded = try refill(cursor) }
            let target: UnsafeMutableRawPointer
            let room: Int
            if let destination {
                target = destination + (count - remaining)
                room = remaining
            } else {
                if cursor.discard == nil { cursor.discard = .allocate(byteCount: 64 << 10, alignment: 16) }
                target = cursor.discard!.baseAddress!
                room = min(remaining, cursor.discard!.count)
            }
            let before = inflater.inputLeft
            let produced: Int
            do {
                produced = try inflater.inflate(into: UnsafeMutableRawBufferPointer(start: target, count: room))
            } catch {
                throw ContainerError.dataMismatch(location.name, reason: InflateError.reason(of: error))
            }
            if cursor.output + Int64(produced) > size {
                throw ContainerError.dataMismatch(location.name, reason: "it inflates to more than its declared \(size) bytes (a zip bomb?)")
            }
            try integrity.record(UnsafeRawBufferPointer(start: target, count: produced), at: cursor.output)
            cursor.output += Int64(produced)
            remaining -= produced
            if inflater.isFinished {
                cursor.finished = true
                try checkEnd(cursor)
                if remaining > 0 {
                    throw ContainerError.dataMismatch(location.name, reason: "it inflates to fewer bytes than declared")
                }
            } else if produced == 0 && loaded == 0 && inflater.inputLeft == before {
                try checkStuck(cursor)
            }
            if produced > 0 { noteProgress(cursor) }
        }
        if cursor.output == size, !cursor.finished { try probeForTrailingData(cursor) }
        try integrity.check()
    }

    /// The decoder made no progress although it was given all the input it could have.
    private func checkStuck(_ cursor: Cursor) throws {
        if cursor.inputNext >= location.compressedSize && cursor.inflater.inputLeft == 0 {
            throw ContainerError.dataMismatch(location.name, reason: "the compressed data ends early")
        }
        if cursor.inflater.inputLeft > 0 {
            throw ContainerError.dataMismatch(location.name, reason: "the deflate stream is corrupt")
        }
    }

    /// Extends the index after a cursor produced output at its edge.
    private func noteProgress(_ cursor: Cursor) {
        lock.withLock {
            guard cursor.output > indexedThrough else { return }
            indexedThrough = cursor.output
            if cursor.output - checkpoints.last!.output >= spacing, cursor.output < size { addCheckpoint(cursor) }
        }
    }

    /// Loads the next piece of compressed input into the cursor's buffer, if any is left;
    /// returns how many bytes it loaded.
    private func refill(_ cursor: Cursor) throws -> Int {
        let left = location.compressedSize - cursor.inputNext
        if left <= 0 { return 0 } // the decoder may still finish from the bits it holds
        let n = Int(min(Int64(cursor.inputBuffer.count), left))
        let piece = UnsafeMutableRawBufferPointer(rebasing: cursor.inputBuffer[0..<n])
        let position = location.dataOffset + cursor.inputNext
        if cursor.readAhead?.read(into: piece, at: position) == true {
            readsAhead.add(1, ordering: .relaxed)
        } else {
            try file.read(into: piece, at: position)
        }
        cursor.inputNext += Int64(n)
        cursor.inflater.setInput(UnsafeRawBufferPointer(piece))
        return n
    }

    /// Saves the cursor's decoder as a checkpoint (the caller holds `lock`). A failure to
    /// compress only means no checkpoint here.
    private func addCheckpoint(_ cursor: Cursor) {
        if stateCompressor == nil { stateCompressor = try? Deflater(level: .quick) }
        guard let stateCompressor else { return }
        cursor.inflater.savedState(into: &savedState)
        guard let packed = try? savedState.withUnsafeBytes({ try stateCompressor.compress($0) }) else { return }
        let consumed = cursor.inputNext - Int64(cursor.inflater.inputLeft)
        checkpoints.append(Checkpoint(output: cursor.output, input: consumed, state: packed))
        stateBytes += packed.count
        if stateBytes > Self.windowBudget {
            // Poorly compressible data: keep every other checkpoint and space new ones wider.
            checkpoints = checkpoints.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
            stateBytes = checkpoints.reduce(0) { $0 + $1.state.count }
            spacing *= 2
        }
    }

    /// At the declared end, the stream must end too: more output means the header lied.
    private func probeForTrailingData(_ cursor: Cursor) throws {
        var byte: UInt8 = 0
        while true {
            var loaded = 0
            if cursor.inflater.inputLeft == 0 { loaded = try refill(cursor) }
            let before = cursor.inflater.inputLeft
            let produced: Int
            do {
                produced = try withUnsafeMutableBytes(of: &byte) { try cursor.inflater.inflate(into: $0) }
            } catch {
                throw ContainerError.dataMismatch(location.name, reason: InflateError.reason(of: error))
            }
            if produced > 0 {
                throw ContainerError.dataMismatch(location.name, reason: "it inflates to more than its declared \(size) bytes (a zip bomb?)")
            }
            if cursor.inflater.isFinished { cursor.finished = true; try checkEnd(cursor); return }
            if loaded == 0 && cursor.inflater.inputLeft == before { try checkStuck(cursor) }
        }
    }

    private func checkEnd(_ cursor: Cursor) throws {
        if cursor.output != size {
            throw ContainerError.dataMismatch(location.name, reason: "it inflates to \(cursor.output) bytes, not the declared \(size)")
        }
        // (The CRC-32 was checked when the last byte was produced: see `EntryIntegrity`.)
    }
}

import CZlib
import Foundation

/// Random access into a deflated entry without restarting from the beginning.
///
/// Deflate streams cannot be entered in the middle, so as the entry is decoded the first time
/// we record checkpoints at deflate block boundaries (the zlib "zran" technique): the input
/// position, the bit offset inside that byte, and the last 32 KiB of output that later
/// back-references may use. A read at offset X then starts from the checkpoint at or before X,
/// so it inflates at most one checkpoint spacing of data. Windows are kept zlib-compressed and
/// the spacing grows with the entry so the index stays small (about 2,048 checkpoints, and never
/// more than `windowBudget` bytes of windows: past that every other checkpoint is dropped).
/// A few live decoders ("cursors") are kept so sequential reads just continue.
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
        let bits: Int32
        let window: [UInt8] // zlib-compressed
    }

    private final class Cursor {
        let inflater: Inflater
        var output: Int64
        var inputNext: Int64          // offset (in the compressed data) of the next byte to load
        var finished = false
        var lastUse: UInt64 = 0
        let inputBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)

        init(output: Int64, inputNext: Int64) throws {
            inflater = try Inflater()
            self.output = output
            self.inputNext = inputNext
        }

        deinit { inputBuffer.deallocate() }
    }

    private let lock = NSLock()
    private let integrity: EntryIntegrity
    private var checkpoints: [Checkpoint]
    private var indexedThrough: Int64 = 0
    private var cursors: [Cursor] = []
    private var useCounter: UInt64 = 0
    private var spacing: Int64
    private var windowBytes = 0
    /// Memory the checkpoint windows may take (they compress about 3:1 on typical documents).
    static let windowBudget = 24 << 20
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
    private let windowBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 32 << 10, alignment: 16)
    private static let maxCursors = 4

    init(file: PosixFile, location: EntryLocation) {
        self.file = file
        self.location = location
        spacing = max(512 << 10, location.uncompressedSize / 2048)
        checkpoints = [Checkpoint(output: 0, input: 0, bits: 0, window: [])]
        integrity = EntryIntegrity(location)
    }

    deinit {
        scratch.deallocate()
        windowBuffer.deallocate()
    }

    /// Bytes of memory the index holds now (for benchmarks and diagnostics).
    var indexMemory: Int {
        lock.lock(); defer { lock.unlock() }
        return checkpoints.reduce(0) { $0 + $1.window.count + 32 }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        guard offset >= 0 else { return 0 }
        let count = Int(max(0, min(Int64(buffer.count), size - offset)))
        // An empty entry is read at once: its stream must end at once and its CRC match.
        if count == 0 && (size > 0 || offset != 0) { return 0 }
        lock.lock(); defer { lock.unlock() }
        try integrity.checkUsable()
        let cursor = try cursorFor(offset)
        do {
            if cursor.output < offset { try decode(cursor, count: Int(offset - cursor.output), into: nil) }
            try decode(cursor, count: count, into: count > 0 ? buffer.baseAddress : nil)
        } catch {
            cursors.removeAll { $0 === cursor }
            throw integrity.fail(error)
        }
        return count
    }

    /// The live cursor or checkpoint closest before `offset`.
    private func cursorFor(_ offset: Int64) throws -> Cursor {
        useCounter += 1
        let checkpoint = checkpoints[indexOfCheckpoint(atOrBefore: offset)]
        if let best = cursors.filter({ $0.output <= offset && !$0.finished }).max(by: { $0.output < $1.output }),
           best.output >= checkpoint.output {
            best.lastUse = useCounter
            return best
        }
        let cursor = try Cursor(output: checkpoint.output, inputNext: checkpoint.input)
        let stream = cursor.inflater.stream
        if checkpoint.bits > 0 {
            let byte = try file.read(count: 1, at: location.dataOffset + checkpoint.input - 1)
            guard byte.count == 1 else { throw ContainerError.corruptZip("'\(location.name)' is truncated") }
            inflatePrime(stream, checkpoint.bits, Int32(byte[0]) >> (8 - checkpoint.bits))
        }
        if !checkpoint.window.isEmpty {
            guard let n = zlibDecompress(checkpoint.window, into: windowBuffer) else {
                throw ContainerError.dataMismatch(location.name, reason: "the seek index is damaged")
            }
            inflateSetDictionary(stream, windowBuffer.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(n))
        }
        cursor.lastUse = useCounter
        if cursors.count >= Self.maxCursors,
           let oldest = cursors.indices.min(by: { cursors[$0].lastUse < cursors[$1].lastUse }) {
            cursors.remove(at: oldest)
        }
        cursors.append(cursor)
        return cursor
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
    /// recording checkpoints when the cursor is at the edge of what is indexed.
    private func decode(_ cursor: Cursor, count: Int, into destination: UnsafeMutableRawPointer?) throws {
        let stream = cursor.inflater.stream
        var remaining = count
        while remaining > 0 {
            if stream.pointee.avail_in == 0 { try refill(cursor) }
            let target: UnsafeMutableRawPointer
            let room: Int
            if let destination {
                target = destination + (count - remaining)
                room = remaining
            } else {
                target = scratch.baseAddress!
                room = min(remaining, scratch.count)
            }
            stream.pointee.next_out = target.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(room)
            let indexing = cursor.output >= indexedThrough
            let rc = inflate(stream, indexing ? Z_BLOCK : Z_NO_FLUSH)
            let produced = room - Int(stream.pointee.avail_out)
            if cursor.output + Int64(produced) > size {
                throw ContainerError.dataMismatch(location.name, reason: "it inflates to more than its declared \(size) bytes (a zip bomb?)")
            }
            try integrity.record(UnsafeRawBufferPointer(start: target, count: produced), at: cursor.output)
            cursor.output += Int64(produced)
            remaining -= produced
            switch rc {
            case Z_STREAM_END:
                cursor.finished = true
                try checkEnd(cursor)
                if remaining > 0 {
                    throw ContainerError.dataMismatch(location.name, reason: "it inflates to fewer bytes than declared")
                }
            case Z_OK:
                break
            case Z_BUF_ERROR where cursor.inputNext < location.compressedSize || stream.pointee.avail_in > 0:
                break
            case Z_BUF_ERROR:
                throw ContainerError.dataMismatch(location.name, reason: "the compressed data ends early")
            default:
                throw ContainerError.dataMismatch(location.name, reason: "the deflate stream is corrupt")
            }
            if indexing {
                indexedThrough = max(indexedThrough, cursor.output)
                let flags = stream.pointee.data_type
                if flags & 128 != 0, flags & 64 == 0, cursor.output - checkpoints.last!.output >= spacing {
                    addCheckpoint(cursor)
                }
            }
        }
        if cursor.output == size, !cursor.finished { try probeForTrailingData(cursor) }
        try integrity.check()
    }

    /// Loads the next piece of compressed input into the cursor's buffer, if any is left.
    private func refill(_ cursor: Cursor) throws {
        let stream = cursor.inflater.stream
        let left = location.compressedSize - cursor.inputNext
        if left <= 0 { return } // inflate may still finish from the bits it holds
        let n = Int(min(Int64(cursor.inputBuffer.count), left))
        try file.read(into: UnsafeMutableRawBufferPointer(rebasing: cursor.inputBuffer[0..<n]),
                      at: location.dataOffset + cursor.inputNext)
        cursor.inputNext += Int64(n)
        stream.pointee.next_in = cursor.inputBuffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(n)
    }

    private func addCheckpoint(_ cursor: Cursor) {
        let stream = cursor.inflater.stream
        var length = uInt(windowBuffer.count)
        inflateGetDictionary(stream, windowBuffer.baseAddress!.assumingMemoryBound(to: Bytef.self), &length)
        let consumed = cursor.inputNext - Int64(stream.pointee.avail_in)
        let window = zlibCompress(UnsafeRawBufferPointer(start: windowBuffer.baseAddress, count: Int(length)))
        checkpoints.append(Checkpoint(output: cursor.output, input: consumed, bits: stream.pointee.data_type & 7,
                                      window: window))
        windowBytes += window.count
        if windowBytes > Self.windowBudget {
            // Poorly compressible data: keep every other checkpoint and space new ones wider.
            checkpoints = checkpoints.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
            windowBytes = checkpoints.reduce(0) { $0 + $1.window.count }
            spacing *= 2
        }
    }

    /// At the declared end, the stream must end too: more output means the header lied.
    private func probeForTrailingData(_ cursor: Cursor) throws {
        let stream = cursor.inflater.stream
        var byte: UInt8 = 0
        while true {
            if stream.pointee.avail_in == 0 { try refill(cursor) }
            let rc = withUnsafeMutablePointer(to: &byte) { p -> Int32 in
                stream.pointee.next_out = p
                stream.pointee.avail_out = 1
                return inflate(stream, Z_NO_FLUSH)
            }
            if stream.pointee.avail_out == 0 {
                throw ContainerError.dataMismatch(location.name, reason: "it inflates to more than its declared \(size) bytes (a zip bomb?)")
            }
            if rc == Z_STREAM_END { cursor.finished = true; try checkEnd(cursor); return }
            if rc == Z_BUF_ERROR, cursor.inputNext >= location.compressedSize, stream.pointee.avail_in == 0 {
                throw ContainerError.dataMismatch(location.name, reason: "the compressed data ends early")
            }
            if rc != Z_OK && rc != Z_BUF_ERROR {
                throw ContainerError.dataMismatch(location.name, reason: "the deflate stream is corrupt")
            }
        }
    }

    private func checkEnd(_ cursor: Cursor) throws {
        if cursor.output != size {
            throw ContainerError.dataMismatch(location.name, reason: "it inflates to \(cursor.output) bytes, not the declared \(size)")
        }
        // (The CRC-32 was checked when the last byte was produced: see `EntryIntegrity`.)
    }
}

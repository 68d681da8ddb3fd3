import Foundation

/// Reads a whole entry from start to end in large chunks, checking its size and CRC-32.
/// This is the fast path for extraction; random access goes through `EntryContent`.
enum EntryStream {
    static let chunkSize = 256 << 10

    /// Calls `body` with each piece of the uncompressed data, in order. Throws if the data is
    /// longer or shorter than declared or its CRC is wrong (after `body` saw the bytes, so
    /// callers write to a temporary and only keep it when this returns).
    static func forEachChunk(of location: EntryLocation, in file: PosixFile,
                             _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let helper = location.uncompressedSize >= 4 << 20 && ProcessInfo.processInfo.activeProcessorCount > 1
            ? HelperThread() : nil
        let (produced, crc) = try withoutActuallyEscaping(body) { body in
            // Whatever ends this block, an error included, the helper must have finished the
            // job that holds `body` before the block returns: `body` may not outlive it.
            defer { helper?.stop() }
            switch location.method {
            case ZipMethod.stored:
                return try readStored(location, in: file, helper: helper, body)
            case ZipMethod.deflated:
                let source = try InflateSource(location, in: file)
                if let helper {
                    let crc = try BatonPipeline(source, body).run(on: helper)
                    return (source.produced, crc)
                }
                let output = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 64)
                defer { output.deallocate() }
                var crc: UInt32 = 0
                while !source.ended {
                    let n = try source.fill(output)
                    guard n > 0 else { continue }
                    let piece = UnsafeRawBufferPointer(rebasing: output[0..<n])
                    crc = crc32Update(crc, piece)
                    try body(piece)
                }
                return (source.produced, crc)
            default:
                throw ContainerError.unsupported("compression method \(location.method) of '\(location.name)'")
            }
        }
        if produced != location.uncompressedSize {
            throw ContainerError.dataMismatch(location.name, reason: "it holds \(produced) bytes, not the declared \(location.uncompressedSize)")
        }
        if crc != location.crc32 {
            throw ContainerError.dataMismatch(location.name, reason: "CRC-32 mismatch")
        }
    }

    /// A stored entry: reading is cheap, so the helper computes the CRC while `body` runs here.
    /// Returns (bytes read, CRC-32).
    private static func readStored(_ location: EntryLocation, in file: PosixFile, helper: HelperThread?,
                                   _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> (Int64, UInt32) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 64)
        defer { buffer.deallocate() }
        var crc: UInt32 = 0
        var produced: Int64 = 0
        while produced < location.uncompressedSize {
            let n = Int(min(Int64(chunkSize), location.uncompressedSize - produced))
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<n])
            try file.read(into: piece, at: location.dataOffset + produced)
            let bytes = UnsafeRawBufferPointer(piece)
            if let helper, n >= 64 << 10 {
                let before = crc
                nonisolated(unsafe) var updated: UInt32 = 0
                helper.begin { updated = crc32Update(before, bytes) }
                let failure = Result { try body(bytes) }
                try helper.wait()
                try failure.get()
                crc = updated
            } else {
                crc = crc32Update(crc, bytes)
                try body(bytes)
            }
            produced += Int64(n)
        }
        return (produced, crc)
    }

    /// The whole entry in memory, for small metadata entries only.
    static func readAll(_ location: EntryLocation, in file: PosixFile, limit: Int64) throws -> [UInt8] {
        guard location.uncompressedSize <= limit else {
            throw ContainerError.unsupported("'\(location.name)' is larger than \(limit) bytes")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(location.uncompressedSize))
        try forEachChunk(of: location, in: file) { bytes.append(contentsOf: $0) }
        return bytes
    }
}

/// The inflating side of a deflated entry: the decoder, its compressed input (which must stay
/// put until the decoder consumed it) and the checks on what comes out. Plain memory, so it can
/// move between threads, one at a time (see `BatonPipeline`).
final class InflateSource {
    private let location: EntryLocation
    private let file: PosixFile
    private let inflater: Inflater
    private let input: UnsafeMutableRawBufferPointer
    private var consumed: Int64 = 0
    private(set) var produced: Int64 = 0
    /// The final block ended and everything was handed out.
    private(set) var ended = false

    init(_ location: EntryLocation, in file: PosixFile) throws {
        self.location = location
        self.file = file
        inflater = try Inflater()
        input = UnsafeMutableRawBufferPointer.allocate(byteCount: EntryStream.chunkSize, alignment: 64)
    }

    deinit { input.deallocate() }

    /// Inflates into `output` until it is full or the stream ended; returns how many bytes it
    /// wrote. Throws a data mismatch for a corrupt or short stream, or one that inflates to more
    /// than declared (checked at least once per `output`, so a zip bomb stops early).
    func fill(_ output: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        while !ended && filled < output.count {
            var loaded = 0
            if inflater.inputLeft == 0 {
                loaded = Int(min(Int64(input.count), location.compressedSize - consumed))
                if loaded > 0 {
                    try file.read(into: UnsafeMutableRawBufferPointer(rebasing: input[0..<loaded]), at: location.dataOffset + consumed)
                    consumed += Int64(loaded)
                }
                inflater.setInput(UnsafeRawBufferPointer(rebasing: input[0..<loaded]))
            }
            let before = inflater.inputLeft
            let n: Int
            do { n = try inflater.inflate(into: UnsafeMutableRawBufferPointer(rebasing: output[filled...])) } catch {
                throw ContainerError.dataMismatch(location.name, reason: InflateError.reason(of: error))
            }
            if inflater.isFinished {
                ended = true
            } else if n == 0 && inflater.inputLeft == before && loaded == 0 {
                // No progress and nothing more to give it.
                if consumed >= location.compressedSize {
                    throw ContainerError.dataMismatch(location.name, reason: "the compressed data ends early")
                }
                if inflater.inputLeft > 0 {
                    throw ContainerError.dataMismatch(location.name, reason: "the deflate stream is corrupt")
                }
            }
            if produced + Int64(n) > location.uncompressedSize {
                throw ContainerError.dataMismatch(
                    location.name, reason: "it inflates to more than its declared \(location.uncompressedSize) bytes (a zip bomb?)")
            }
            produced += Int64(n)
            filled += n
        }
        return filled
    }
}

/// Inflates and delivers a large deflated entry on two threads, each of which inflates a whole
/// chunk into its own buffer and then delivers it (CRC-32, `body`) while the bytes are still in
/// its core's cache: SHA-256 over a chunk another core just wrote ran about 40% slower.
/// Two batons go back and forth: the `InflateSource` (inflating is one sequential chain, which
/// this way runs back to back, half on each thread) and the delivery turn with the running CRC
/// (so `body` sees the chunks in order, never two at once). Thread 0 inflates and delivers the
/// even chunks, thread 1 the odd ones.
final class BatonPipeline: @unchecked Sendable {
    private let source: InflateSource
    private let body: (UnsafeRawBufferPointer) throws -> Void
    private let inflating = Baton()
    private let delivering = Baton()
    private var crc: UInt32 = 0  // only touched by the holder of `delivering`
    private let failure = FirstFailure()

    /// `body` must not outlive the call of `run`.
    init(_ source: InflateSource, _ body: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.source = source
        self.body = body
    }

    /// Runs this thread as thread 0 and `helper` as thread 1, and returns the CRC-32 once both
    /// finished; throws the first error either hit (after which neither calls `body` again).
    func run(on helper: HelperThread) throws -> UInt32 {
        helper.begin { self.work(as: 1) }
        work(as: 0)
        try helper.wait()
        try failure.check()
        return crc
    }

    private func work(as me: Int) {
        let other = 1 - me
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: EntryStream.chunkSize, alignment: 64)
        defer { output.deallocate() }
        while true {
            inflating.take(me)
            if source.ended || failure.happened {
                inflating.pass(to: other)
                return
            }
            let n: Int
            do { n = try source.fill(output) } catch {
                failure.record(error)
                inflating.pass(to: other)
                return
            }
            let last = source.ended
            inflating.pass(to: other)

            delivering.take(me)
            if n > 0 && !failure.happened {
                let piece = UnsafeRawBufferPointer(rebasing: output[0..<n])
                crc = crc32Update(crc, piece)
                do { try body(piece) } catch { failure.record(error) }
            }
            delivering.pass(to: other)
            if last || failure.happened { return }
        }
    }
}

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
        // Two output buffers: with a helper thread, one is inflated into while the other is
        // checked and handed to `body`.
        let buffers = [UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16),
                       UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)]
        defer { buffers.forEach { $0.deallocate() } }
        var crc: UInt32 = 0
        var produced: Int64 = 0
        let helper = location.uncompressedSize >= 4 << 20 && ProcessInfo.processInfo.activeProcessorCount > 1
            ? HelperThread() : nil
        try withoutActuallyEscaping(body) { body in
            // Whatever ends this block, an error included, the helper must have finished the
            // job that holds `body` before the block returns: `body` may not outlive it.
            defer { helper?.stop() }
            nonisolated(unsafe) let body = body
            switch location.method {
            case ZipMethod.stored:
                // Reading is cheap: the helper computes the CRC while `body` runs here.
                while produced < location.uncompressedSize {
                    let n = Int(min(Int64(chunkSize), location.uncompressedSize - produced))
                    let piece = UnsafeMutableRawBufferPointer(rebasing: buffers[0][0..<n])
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
            case ZipMethod.deflated:
                // Inflating is the slow part: the helper checks and delivers one buffer while
                // this thread inflates into the other.
                let inflater = try Inflater()
                let input = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
                defer { input.deallocate() }
                var consumed: Int64 = 0
                var ended = false
                var current = 0
                nonisolated(unsafe) var runningCRC: UInt32 = 0
                while !ended {
                    var loaded = 0
                    if inflater.inputLeft == 0 {
                        loaded = Int(min(Int64(chunkSize), location.compressedSize - consumed))
                        if loaded > 0 {
                            try file.read(into: UnsafeMutableRawBufferPointer(rebasing: input[0..<loaded]), at: location.dataOffset + consumed)
                            consumed += Int64(loaded)
                        }
                        inflater.setInput(UnsafeRawBufferPointer(rebasing: input[0..<loaded]))
                    }
                    let output = buffers[current]
                    let before = inflater.inputLeft
                    let n: Int
                    do { n = try inflater.inflate(into: output) } catch {
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
                    guard n > 0 else { continue }
                    let piece = UnsafeRawBufferPointer(start: output.baseAddress, count: n)
                    if let helper {
                        try helper.wait()  // the other buffer is free again, and `body` saw it
                        helper.begin {
                            runningCRC = crc32Update(runningCRC, piece)
                            try body(piece)
                        }
                        current ^= 1
                    } else {
                        runningCRC = crc32Update(runningCRC, piece)
                        try body(piece)
                    }
                }
                try helper?.wait()
                crc = runningCRC
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

/// A thread that runs one job at a time for a streaming read, handed over with semaphores (which
/// also order the memory accesses): `begin(job)`, then `wait()` before the job's memory is reused;
/// `wait` rethrows what the job threw. With nothing begun, `wait` returns at once.
final class HelperThread: @unchecked Sendable {
    private let go = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private var job: (() throws -> Void)?
    private var failure: Error?
    private var busy = false
    private var stopping = false

    init() {
        let thread = Thread { [self] in
            while true {
                go.wait()
                if stopping { return }
                do { try job?() } catch { failure = error }
                job = nil
                done.signal()
            }
        }
        thread.name = "asicfs-stream"
        thread.start()
    }

    func begin(_ job: @escaping () throws -> Void) {
        self.job = job
        busy = true
        go.signal()
    }

    func wait() throws {
        guard busy else { return }
        done.wait()
        busy = false
        if let failure {
            self.failure = nil
            throw failure
        }
    }

    /// Ends the thread (after waiting for a job still running, whose error is dropped).
    func stop() {
        if busy { done.wait(); busy = false }
        stopping = true
        go.signal()
    }
}

import CZlib
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
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { output.deallocate() }
        var crc: UInt32 = 0
        var produced: Int64 = 0
        let worker = location.uncompressedSize >= 4 << 20 && ProcessInfo.processInfo.activeProcessorCount > 1 ? CRCWorker() : nil
        defer { worker?.stop() }
        switch location.method {
        case ZipMethod.stored:
            while produced < location.uncompressedSize {
                let n = Int(min(Int64(chunkSize), location.uncompressedSize - produced))
                let piece = UnsafeMutableRawBufferPointer(rebasing: output[0..<n])
                try file.read(into: piece, at: location.dataOffset + produced)
                crc = try deliver(UnsafeRawBufferPointer(piece), crc: crc, worker: worker, body)
                produced += Int64(n)
            }
        case ZipMethod.deflated:
            let inflater = try Inflater()
            let stream = inflater.stream
            let input = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
            defer { input.deallocate() }
            var consumed: Int64 = 0
            var ended = false
            while !ended {
                if stream.pointee.avail_in == 0 {
                    let n = Int(min(Int64(chunkSize), location.compressedSize - consumed))
                    if n > 0 {
                        try file.read(into: UnsafeMutableRawBufferPointer(rebasing: input[0..<n]), at: location.dataOffset + consumed)
                        consumed += Int64(n)
                    }
                    stream.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.pointee.avail_in = uInt(n)
                }
                stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(chunkSize)
                let rc = inflate(stream, Z_NO_FLUSH)
                let n = chunkSize - Int(stream.pointee.avail_out)
                switch rc {
                case Z_STREAM_END: ended = true
                case Z_OK: break
                case Z_BUF_ERROR where consumed < location.compressedSize || stream.pointee.avail_in > 0: break
                case Z_BUF_ERROR:
                    throw ContainerError.dataMismatch(location.name, reason: "the compressed data ends early")
                default: throw ContainerError.dataMismatch(location.name, reason: "the deflate stream is corrupt")
                }
                if produced + Int64(n) > location.uncompressedSize {
                    throw ContainerError.dataMismatch(
                        location.name, reason: "it inflates to more than its declared \(location.uncompressedSize) bytes (a zip bomb?)")
                }
                let piece = UnsafeRawBufferPointer(start: output.baseAddress, count: n)
                if n > 0 { crc = try deliver(piece, crc: crc, worker: worker, body) }
                produced += Int64(n)
            }
        default:
            throw ContainerError.unsupported("compression method \(location.method) of '\(location.name)'")
        }
        if produced != location.uncompressedSize {
            throw ContainerError.dataMismatch(location.name, reason: "it holds \(produced) bytes, not the declared \(location.uncompressedSize)")
        }
        if crc != location.crc32 {
            throw ContainerError.dataMismatch(location.name, reason: "CRC-32 mismatch")
        }
    }

    /// Hands `piece` to `body` and returns the CRC updated with it. For large entries a helper
    /// thread computes the CRC while `body` runs: zlib's CRC-32 costs about half of what SHA-256
    /// does, so on two cores hashing a data file for a signature no longer pays for both.
    private static func deliver(_ piece: UnsafeRawBufferPointer, crc: UInt32, worker: CRCWorker?,
                                _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> UInt32 {
        guard let worker, piece.count >= 64 << 10 else {
            let updated = crc32Update(crc, piece)
            try body(piece)
            return updated
        }
        worker.begin(piece, crc: crc)
        do { try body(piece) } catch {
            _ = worker.result()
            throw error
        }
        return worker.result()
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

/// A thread that computes one CRC-32 update at a time, handed over with semaphores (which also
/// order the memory accesses): `begin`, then `result` before the piece's memory is reused.
final class CRCWorker: @unchecked Sendable {
    private let go = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private var piece = UnsafeRawBufferPointer(start: nil, count: 0)
    private var crc: UInt32 = 0
    private var stopping = false

    init() {
        let thread = Thread { [self] in
            while true {
                go.wait()
                if stopping { return }
                crc = crc32Update(crc, piece)
                done.signal()
            }
        }
        thread.name = "asicfs-crc32"
        thread.start()
    }

    func begin(_ piece: UnsafeRawBufferPointer, crc: UInt32) {
        self.piece = piece
        self.crc = crc
        go.signal()
    }

    func result() -> UInt32 {
        done.wait()
        return crc
    }

    func stop() {
        stopping = true
        go.signal()
    }
}

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
        switch location.method {
        case ZipMethod.stored:
            while produced < location.uncompressedSize {
                let n = Int(min(Int64(chunkSize), location.uncompressedSize - produced))
                let piece = UnsafeMutableRawBufferPointer(rebasing: output[0..<n])
                try file.read(into: piece, at: location.dataOffset + produced)
                crc = crc32Update(crc, UnsafeRawBufferPointer(piece))
                try body(UnsafeRawBufferPointer(piece))
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
                crc = crc32Update(crc, piece)
                if n > 0 { try body(piece) }
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

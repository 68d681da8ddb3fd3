import CZlib

/// A zlib stream (RFC 1950) inflated in memory, up to `limit` bytes: more is a bomb, refused.
enum CDOC1Zlib {
    static func inflate(_ input: [UInt8], limit: Int) throws -> [UInt8] {
        var stream = z_stream()
        guard inflateInit_(&stream, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw CDOCError(.malformed, "cannot start zlib")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var source = input
        return try source.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = UInt32(inputBuffer.count)
            while true {
                let result = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                output += chunk[..<produced]
                if output.count > limit { throw CDOCError(.limit, "the compressed payload inflates to more than \(limit) bytes") }
                if result == Z_STREAM_END { return output }
                guard result == Z_OK, produced > 0 || stream.avail_in > 0 else {
                    throw CDOCError(.malformed, "the compressed payload is not a complete zlib stream")
                }
            }
        }
    }
}

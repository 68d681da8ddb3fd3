import CZlib

/// A raw-deflate decompressor. The z_stream lives on the heap because zlib keeps a pointer
/// back to it; Swift must never move it.
final class Inflater {
    let stream: UnsafeMutablePointer<z_stream>

    init() throws {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard czlib_inflate_init_raw(stream) == Z_OK else {
            stream.deallocate()
            throw ContainerError.unsupported("zlib could not start a decompressor")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }
}

/// A raw-deflate compressor.
final class Deflater {
    let stream: UnsafeMutablePointer<z_stream>

    init(level: Int32) throws {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard czlib_deflate_init_raw(stream, level) == Z_OK else {
            stream.deallocate()
            throw ContainerError.unsupported("zlib could not start a compressor")
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }
}

/// CRC-32 as ZIP uses it (zlib's implementation).
func crc32Update(_ crc: UInt32, _ buffer: UnsafeRawBufferPointer) -> UInt32 {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return crc }
    var value = UInt(crc)
    var offset = 0
    while offset < buffer.count {
        let n = min(buffer.count - offset, Int(Int32.max))
        value = CZlib.crc32(value, base.advanced(by: offset).assumingMemoryBound(to: UInt8.self), uInt(n))
        offset += n
    }
    return UInt32(truncatingIfNeeded: value)
}

func crc32Of(_ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBytes { crc32Update(0, $0) }
}

/// Small zlib-format compression for in-memory buffers (the seek index keeps its windows this way).
func zlibCompress(_ input: UnsafeRawBufferPointer) -> [UInt8] {
    var bound = compressBound(uLong(input.count))
    var out = [UInt8](repeating: 0, count: Int(bound))
    let rc = out.withUnsafeMutableBufferPointer { o in
        compress2(o.baseAddress, &bound, input.baseAddress?.assumingMemoryBound(to: UInt8.self), uLong(input.count), 1)
    }
    precondition(rc == Z_OK, "compress2 cannot fail with a compressBound-sized buffer")
    // A fresh array: removeSubrange would keep the full capacity alive.
    return Array(out[..<Int(bound)])
}

func zlibDecompress(_ input: [UInt8], into output: UnsafeMutableRawBufferPointer) -> Int? {
    var length = uLong(output.count)
    let rc = input.withUnsafeBufferPointer { i in
        uncompress(output.baseAddress?.assumingMemoryBound(to: UInt8.self), &length, i.baseAddress, uLong(input.count))
    }
    return rc == Z_OK ? Int(length) : nil
}

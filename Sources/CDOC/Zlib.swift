import CZlib
import Crypto

/// A zlib (RFC 1950) stream inflated as its bytes arrive, with a bomb guard: the output may not
/// exceed `maximumOutput`, and past `ratioGrace` bytes not `maximumRatio` times the input.
/// CDOC2's payload and libdigidoc's optional zlib layer in CDOC 1.x both go through it.
final class ZlibInflater {
    struct Limits {
        var maximumOutput: Int64 = 1 << 40
        var maximumRatio: Int64 = 200
        var ratioGrace: Int64 = 64 << 20
    }

    private var stream = z_stream()
    private let limits: Limits
    private var buffer: [UInt8]
    private(set) var finished = false
    private var consumed: Int64 = 0
    private var produced: Int64 = 0

    /// `bufferSize`: how much output is handed on at a time (tests make it tiny).
    init(limits: Limits = Limits(), bufferSize: Int = 256 << 10) throws {
        self.limits = limits
        buffer = [UInt8](repeating: 0, count: bufferSize)
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw CDOCError(.io, "zlib cannot start")
        }
    }

    deinit {
        inflateEnd(&stream)
        SecretBytes.zero(&buffer)
    }

    /// Inflates `input`, handing the output to `body` in pieces.
    func feed(_ input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard input.count > 0 else { return }
        guard !finished else { throw CDOCError(.malformed, "the compressed payload has data after its end") }
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        consumed += Int64(input.count)
        defer { stream.next_in = nil; stream.avail_in = 0 }
        // Runs until there is neither input left nor a full buffer (a full buffer may mean more
        // output is waiting).
        var bufferFilled = false
        repeat {
            let (status, count) = buffer.withUnsafeMutableBytes { out -> (Int32, Int) in
                stream.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(out.count)
                let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                return (status, out.count - Int(stream.avail_out))
            }
            switch status {
            case Z_OK, Z_BUF_ERROR: break
            case Z_STREAM_END: finished = true
            default: throw CDOCError(.malformed, "the compressed payload is not a valid zlib stream")
            }
            produced += Int64(count)
            if produced > limits.maximumOutput || (produced > limits.ratioGrace && produced > consumed * limits.maximumRatio) {
                throw CDOCError(.limit, "the compressed payload inflates to more than \(limits.maximumOutput) bytes or far beyond its size (a compression bomb?)")
            }
            if count > 0 { try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) } }
            if status == Z_BUF_ERROR && count == 0 { break }
            bufferFilled = count == buffer.count
        } while !finished && (stream.avail_in > 0 || bufferFilled)
        if finished && stream.avail_in > 0 { throw CDOCError(.malformed, "the compressed payload has data after its end") }
    }

    /// A whole stream in memory, to at most `limit` bytes (CDOC 1.x: the size the file declares).
    static func inflate(_ input: [UInt8], limit: Int) throws -> [UInt8] {
        let inflater = try ZlibInflater(limits: Limits(maximumOutput: Int64(limit)))
        var output: [UInt8] = []
        do {
            try input.withUnsafeBytes { try inflater.feed($0) { output += $0 } }
        } catch {
            SecretBytes.zero(&output)
            throw error
        }
        guard inflater.finished else {
            SecretBytes.zero(&output)
            throw CDOCError(.malformed, "the compressed payload is not a complete zlib stream")
        }
        return output
    }
}

/// A zlib stream written as the bytes arrive.
final class ZlibDeflater {
    private var stream = z_stream()
    private var buffer = [UInt8](repeating: 0, count: 256 << 10)

    init(level: Int32 = Z_DEFAULT_COMPRESSION) throws {
        guard deflateInit_(&stream, level, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw CDOCError(.io, "zlib cannot start")
        }
    }

    deinit {
        deflateEnd(&stream)
        SecretBytes.zero(&buffer)
    }

    func feed(_ input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard input.count > 0 else { return }
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        defer { stream.next_in = nil; stream.avail_in = 0 }
        try run(Z_NO_FLUSH, body)
    }

    func finish(_ body: (UnsafeRawBufferPointer) throws -> Void) throws { try run(Z_FINISH, body) }

    private func run(_ flush: Int32, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        while true {
            let (status, count) = buffer.withUnsafeMutableBytes { out -> (Int32, Int) in
                stream.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(out.count)
                let status = deflate(&stream, flush)
                return (status, out.count - Int(stream.avail_out))
            }
            guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else { throw CDOCError(.io, "zlib compression failed") }
            if count > 0 { try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) } }
            if flush == Z_FINISH ? status == Z_STREAM_END : (stream.avail_in == 0 && count < buffer.count) { return }
        }
    }
}

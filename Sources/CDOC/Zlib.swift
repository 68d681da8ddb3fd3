import CISAL
import CZlib
import Crypto

/// A zlib (RFC 1950) stream inflated as its bytes arrive, with a bomb guard: the output may not
/// exceed `maximumOutput`, and past `ratioGrace` bytes not `maximumRatio` times the input.
/// CDOC2's payload and libdigidoc's optional zlib layer in CDOC 1.x both go through it. ISA-L's
/// igzip inflates (header and Adler-32 checked): zlib's inflate took ~40% of a CDOC2
/// decryption whose incompressible tar igzip had written as Huffman-coded literals.
final class ZlibInflater {
    struct Limits {
        var maximumOutput: Int64 = 1 << 40
        var maximumRatio: Int64 = 200
        var ratioGrace: Int64 = 64 << 20
    }

    private let state: UnsafeMutableRawPointer
    private let limits: Limits
    private let buffer: UnsafeMutableRawBufferPointer
    private(set) var finished = false
    private var consumed: Int64 = 0
    private var produced: Int64 = 0

    /// `bufferSize`: how much output is handed on at a time (tests make it tiny).
    init(limits: Limits = Limits(), bufferSize: Int = 256 << 10) throws {
        self.limits = limits
        guard let made = cisal_inflater_new() else { throw CDOCError(.io, "ISA-L cannot start an inflater (out of memory)") }
        state = made
        cisal_inflater_set_zlib(state)
        buffer = .allocate(byteCount: bufferSize, alignment: 16)
    }

    deinit {
        cisal_inflater_free(state)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        buffer.deallocate()
    }

    /// Inflates `input`, handing the output to `body` in pieces.
    func feed(_ input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard input.count > 0 else { return }
        guard !finished else { throw CDOCError(.malformed, "the compressed payload has data after its end") }
        var offset = 0
        while offset < input.count {
            // ISA-L counts input in 32 bits.
            let piece = min(input.count - offset, 1 << 30)
            cisal_inflater_set_input(state, (input.baseAddress! + offset).assumingMemoryBound(to: UInt8.self), UInt32(piece))
            consumed += Int64(piece)
            defer { cisal_inflater_set_input(state, nil, 0) }
            // Runs until the input is used up and a call leaves room in the buffer (a full
            // buffer may mean more output is waiting), or the stream ends.
            while true {
                var count: UInt32 = 0
                let status = cisal_inflater_run(state, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(buffer.count), &count)
                guard status == ISAL_DECOMP_OK else {
                    throw CDOCError(.malformed, "the compressed payload is not a valid zlib stream")
                }
                produced += Int64(count)
                if produced > limits.maximumOutput || (produced > limits.ratioGrace && produced > consumed * limits.maximumRatio) {
                    throw CDOCError(.limit, "the compressed payload inflates to more than \(limits.maximumOutput) bytes or far beyond its size (a compression bomb?)")
                }
                if count > 0 { try body(UnsafeRawBufferPointer(rebasing: buffer[..<Int(count)])) }
                if cisal_inflater_finished(state) != 0 {
                    finished = true
                    if cisal_inflater_unused(state) > 0 || offset + piece < input.count {
                        throw CDOCError(.malformed, "the compressed payload has data after its end")
                    }
                    return
                }
                if cisal_inflater_input_left(state) == 0 && Int(count) < buffer.count { break }
            }
            offset += piece
        }
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

import CISAL

/// A zlib (RFC 1950) stream written as the bytes arrive, by ISA-L's igzip at its level 1: CDOC2's
/// payload. zlib's own deflate ran at ~29 MiB/s on incompressible data at every level (1 GiB took
/// 35 s to encrypt); igzip level 1 runs at ~750 MiB/s there and still compresses text (measured:
/// Benchmarks/results/cdoc-20261206.md). What is encrypted is mostly PDFs and containers that are
/// compressed already.
final class IgzipZlibDeflater {
    private let stream: UnsafeMutableRawPointer
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)

    init() throws {
        guard let made = cisal_deflater_new(1) else { throw CDOCError(.io, "ISA-L could not start a compressor (out of memory)") }
        stream = made
        cisal_deflater_set_zlib(stream)
    }

    deinit {
        cisal_deflater_free(stream)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        buffer.deallocate()
    }

    func feed(_ input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard input.count > 0 else { return }
        try run(input, last: false, body)
    }

    func finish(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try run(UnsafeRawBufferPointer(start: nil, count: 0), last: true, body)
    }

    private func run(_ input: UnsafeRawBufferPointer, last: Bool, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        var taken = 0
        while true {
            var consumed: UInt32 = 0, produced: UInt32 = 0
            var ended: Int32 = 0
            let rest = UnsafeRawBufferPointer(rebasing: input[taken...])
            let rc = cisal_deflater_run(stream, rest.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt32(rest.count), last ? 1 : 0,
                                        buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(buffer.count),
                                        &consumed, &produced, &ended)
            guard rc == COMP_OK else { throw CDOCError(.io, "ISA-L failed to compress (error \(rc))") }
            taken += Int(consumed)
            if produced > 0 { try body(UnsafeRawBufferPointer(rebasing: buffer[..<Int(produced)])) }
            if last ? ended != 0 : (taken == input.count && Int(produced) < buffer.count) { return }
        }
    }
}

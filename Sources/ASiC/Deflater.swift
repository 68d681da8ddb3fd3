import CISAL

/// A raw-deflate encoder: ISA-L's igzip. The only Swift file that holds an `isal_zstream`.
///
/// Levels are ISA-L's (0–3), not zlib's: `DeflateLevel` maps the zlib numbers callers know.
/// On the 256 MiB text of fsbench's W4, level 3 compresses within 3 % of zlib -6 at about eight
/// times its speed (see `DeflateLevel`); the level buffers are ISA-L's defaults (282–348 KiB).
final class Deflater {
    private let stream: UnsafeMutableRawPointer
    let level: DeflateLevel

    init(level: DeflateLevel) throws {
        guard let made = cisal_deflater_new(level.isal) else {
            throw ContainerError.unsupported("ISA-L could not start a compressor (out of memory)")
        }
        stream = made
        self.level = level
    }

    deinit { cisal_deflater_free(stream) }

    /// Starts a new stream (same level, same buffers).
    func reset() { cisal_deflater_reset(stream) }

    /// Compresses `input` (`last`: it ends the stream) into `output`, as far as both go.
    /// Returns what was taken and written, and whether the stream is complete.
    func deflate(_ input: UnsafeRawBufferPointer, last: Bool, into output: UnsafeMutableRawBufferPointer)
        throws -> (consumed: Int, produced: Int, ended: Bool) {
        var consumed: UInt32 = 0, produced: UInt32 = 0
        var ended: Int32 = 0
        let rc = cisal_deflater_run(stream, input.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                    UInt32(min(input.count, Int(UInt32.max))), last ? 1 : 0,
                                    output.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                    UInt32(min(output.count, Int(UInt32.max))), &consumed, &produced, &ended)
        guard rc == COMP_OK else { throw ContainerError.unsupported("ISA-L failed to compress (error \(rc))") }
        return (Int(consumed), Int(produced), ended != 0)
    }

    /// Deflates one piece of a larger stream into `output` and returns the bytes written: a
    /// fresh compressor primed with `dictionary` (the 32 KiB that precede the piece), ending
    /// with a sync flush unless the piece is the `last`, so pieces deflated apart (on several
    /// threads, as pigz does) concatenate into one valid stream.
    func deflatePiece(_ input: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer?, last: Bool,
                      into output: UnsafeMutableRawBufferPointer) throws -> Int {
        reset()
        if let dictionary, let base = dictionary.baseAddress, dictionary.count > 0 {
            let rc = cisal_deflater_set_dictionary(stream, base.assumingMemoryBound(to: UInt8.self), UInt32(dictionary.count))
            guard rc == COMP_OK else { throw ContainerError.unsupported("ISA-L refused a dictionary (error \(rc))") }
        }
        cisal_deflater_set_sync_flush(stream, last ? 0 : 1)
        defer { cisal_deflater_set_sync_flush(stream, 0) }
        var taken = 0, written = 0
        while true {
            guard written < output.count else {
                throw ContainerError.unsupported("ISA-L's output did not fit its buffer")
            }
            let room = output.count - written
            let step = try deflate(UnsafeRawBufferPointer(rebasing: input[taken...]), last: last,
                                   into: UnsafeMutableRawBufferPointer(rebasing: output[written...]))
            taken += step.consumed
            written += step.produced
            if last ? step.ended : (taken == input.count && step.produced < room) { return written }
        }
    }

    /// `input` deflated as one stream (for small entries, samples and saved decoder states).
    func compress(_ input: UnsafeRawBufferPointer) throws -> [UInt8] {
        reset()
        var out = [UInt8](repeating: 0, count: input.count + input.count / 8 + 1024)
        var taken = 0, written = 0
        while true {
            if written == out.count { out += [UInt8](repeating: 0, count: out.count / 2 + 1024) }
            let step = try out.withUnsafeMutableBytes { o in
                try deflate(UnsafeRawBufferPointer(rebasing: input[taken...]), last: true,
                            into: UnsafeMutableRawBufferPointer(rebasing: o[written...]))
            }
            taken += step.consumed
            written += step.produced
            if step.ended { break }
        }
        // A fresh array: removeSubrange would keep the full capacity alive (the seek index
        // keeps thousands of these).
        return Array(out[0..<written])
    }
}

/// A deflate level in zlib's numbers (what `ContainerEdit.compressionLevel` and the tools take),
/// and the ISA-L level that serves it. Measured on fsbench's 256 MiB W4 text (2 cores, loaded):
/// zlib -6 3.215:1 at 25 MB/s, zlib -1 2.887:1 at 66 MB/s; ISA-L level 3 3.136:1 (2.5 % larger
/// than zlib -6) at 128 MB/s, level 2 3.125:1 (2.8 %) at 184 MB/s, level 1 2.928:1 at 275 MB/s.
/// So zlib 1 maps to ISA-L 1 (as small as zlib -1 and four times faster) and every other level
/// to ISA-L 3, the one within 3 % of zlib -6 there. On other data the gap is wider: ISA-L 3 came
/// out 12 % larger than zlib -6 on Swift source, 9 % on Debian's documentation text and on ELF
/// binaries (still smaller than zlib -1 on all but the binaries), at 6 to 10 times the speed.
struct DeflateLevel: Equatable {
    let zlib: Int32

    init(zlib: Int32) { self.zlib = zlib }

    static let standard = DeflateLevel(zlib: 6)
    static let fastest = DeflateLevel(zlib: 1)
    /// ISA-L's level 0 (static Huffman codes, no per-block trees): for the seek index's saved
    /// decoder states, 54 KiB -> 16.6 KiB in 131 µs where level 1 takes 473 µs for 14.8 KiB.
    static let quick = DeflateLevel(zlib: 0)

    var isal: UInt32 { zlib <= 0 ? 0 : zlib == 1 ? 1 : cisal_max_level() }
}

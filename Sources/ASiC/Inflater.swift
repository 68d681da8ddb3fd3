import CISAL

/// Why a deflate stream could not be decoded (the caller says which entry).
struct InflateError: Error {
    let reason: String

    static func reason(of error: Error) -> String {
        (error as? InflateError)?.reason ?? "the deflate stream is corrupt"
    }
}

/// A raw-deflate decoder: ISA-L's igzip, streaming. The only Swift file that holds an
/// `inflate_state`.
///
/// Its whole state can be saved and resumed (`savedState`, `init(resuming:)`), which is how the
/// seek index of a deflated entry keeps checkpoints anywhere in the stream, not only at block
/// boundaries: an `inflate_state` is 87,368 bytes, of which the first 21,544 are the bit buffer,
/// block state and the current block's Huffman decoding tables, and the rest `tmp_out_buffer`,
/// whose valid part (`tmp_out_valid`, normally 32 KiB) holds the last 32 KiB of output (the
/// window later back-references read) and any output decoded but not handed out yet. A saved
/// state is those two parts, about 54 KiB before compression; the input position is the
/// caller's (`consumed` at the moment of saving).
final class Inflater {
    private let state: UnsafeMutableRawPointer

    init() throws {
        guard let made = cisal_inflater_new() else {
            throw ContainerError.unsupported("ISA-L could not start a decompressor (out of memory)")
        }
        state = made
    }

    /// A decoder that continues exactly where the saved one was (feed input from its position).
    init(resuming saved: UnsafeRawBufferPointer) throws {
        guard let made = cisal_inflater_new() else {
            throw ContainerError.unsupported("ISA-L could not start a decompressor (out of memory)")
        }
        state = made
        guard let base = saved.baseAddress,
              cisal_inflater_restore(state, base.assumingMemoryBound(to: UInt8.self), saved.count) == 0 else {
            throw InflateError(reason: "the seek index is damaged")
        }
    }

    deinit { cisal_inflater_free(state) }

    /// Continues from a saved state instead (this decoder's own state is dropped).
    func resume(from saved: UnsafeRawBufferPointer) throws {
        guard let base = saved.baseAddress,
              cisal_inflater_restore(state, base.assumingMemoryBound(to: UInt8.self), saved.count) == 0 else {
            throw InflateError(reason: "the seek index is damaged")
        }
    }

    /// The next input: the bytes must stay valid and unchanged until they are consumed
    /// (`inputLeft == 0`) or replaced by another call.
    func setInput(_ input: UnsafeRawBufferPointer) {
        precondition(input.count <= Int(UInt32.max))
        cisal_inflater_set_input(state, input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt32(input.count))
    }

    /// Input bytes given but not consumed yet (ISA-L may hold up to 8 more in its bit buffer:
    /// those count as consumed, and a saved state keeps them).
    var inputLeft: Int { Int(cisal_inflater_input_left(state)) }

    /// The final block ended and everything was handed out.
    var isFinished: Bool { cisal_inflater_finished(state) != 0 }

    /// Decodes into `output`; returns how many bytes it wrote. Fewer than `output.count` means
    /// it needs more input, or the stream ended (`isFinished`).
    func inflate(into output: UnsafeMutableRawBufferPointer) throws(InflateError) -> Int {
        guard let base = output.baseAddress, output.count > 0 else { return 0 }
        var total = 0
        while total < output.count {
            let room = UInt32(min(output.count - total, Int(UInt32.max)))
            var produced: UInt32 = 0
            let rc = cisal_inflater_run(state, base.advanced(by: total).assumingMemoryBound(to: UInt8.self), room, &produced)
            total += Int(produced)
            if rc < 0 { throw InflateError(reason: Self.describe(rc)) }
            if produced < room { break }
        }
        return total
    }

    private static func describe(_ rc: Int32) -> String {
        switch rc {
        case ISAL_INVALID_LOOKBACK: return "the deflate stream is corrupt (a back-reference before its start)"
        case ISAL_INVALID_SYMBOL: return "the deflate stream is corrupt (an invalid symbol)"
        default: return "the deflate stream is corrupt"
        }
    }

    /// The decoder's state, to resume later with `init(resuming:)` (see the type's comment).
    func savedState(into buffer: inout [UInt8]) {
        let count = cisal_inflater_saved_size(state)
        if buffer.count != count { buffer = [UInt8](repeating: 0, count: count) }
        buffer.withUnsafeMutableBufferPointer { cisal_inflater_save(state, $0.baseAddress!) }
    }

    /// The largest saved state.
    static let maximumSavedSize = cisal_inflater_state_size()

    /// Inflates a whole raw-deflate buffer made by `Deflater.compress` (nil if it is not one or
    /// does not fit `output`).
    func inflateWhole(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int? {
        guard let inBase = input.baseAddress, let outBase = output.baseAddress else { return nil }
        let n = cisal_inflate_whole(state, inBase.assumingMemoryBound(to: UInt8.self), UInt32(input.count),
                                    outBase.assumingMemoryBound(to: UInt8.self), UInt32(output.count))
        return n < 0 ? nil : n
    }
}

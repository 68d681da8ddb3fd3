import Crypto

/// XML's base64Binary decoded as the text arrives, in pieces cut anywhere: the white space
/// between groups (space, tab, CR, LF) is dropped; any other byte that is not base64, padding
/// anywhere but at the end, or a last group left short is refused. Decoded bytes go to `output`
/// in pieces of at most 48 KiB. (Measured against OpenSSL's EVP_DecodeUpdate: see
/// Benchmarks/results/cdoc-20261206.md; EVP_DecodeUpdate also stops at '-', which base64Binary is not.)
final class CDOC1Base64Decoder {
    /// 0…63 for a base64 digit, `space` for XML white space, `pad` for '=', `bad` for the rest.
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: bad, count: 256)
        for (value, digit) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(digit)] = UInt8(value)
        }
        for byte in [0x20, 0x09, 0x0D, 0x0A] { table[byte] = space }
        table[Int(UInt8(ascii: "="))] = pad
        return table
    }()
    private static let space: UInt8 = 0xFD, pad: UInt8 = 0xFE, bad: UInt8 = 0xFF

    private var group: UInt32 = 0
    private var digits = 0
    private var padding = 0
    private let out = UnsafeMutablePointer<UInt8>.allocate(capacity: outCapacity)
    private var outCount = 0
    /// Bytes decoded so far.
    private(set) var count: Int64 = 0

    struct NotBase64: Error {}

    private static let outCapacity = 48 << 10

    init() {}

    deinit {
        out.update(repeating: 0, count: Self.outCapacity)
        out.deallocate()
    }

    /// Decodes all of `text`; throws at a byte that is not base64 or XML white space.
    func take(_ text: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard try decode(text, output: output) == text.count else { throw NotBase64() }
    }

    /// Decodes the longest prefix of `text` made of base64 and white space and returns its
    /// length: the rest (`<` of the next tag, a character reference…) is for the XML parser.
    func takePrefix(_ text: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        try decode(text, output: output)
    }

    private func decode(_ text: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        guard let bytes = text.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return 0 }
        let length = text.count
        var index = 0
        var stop = length
        try Self.table.withUnsafeBufferPointer { table in
            while index < length {
                if outCount > Self.outCapacity - 64 { try flush(output) }
                // Whole groups of four digits at once, the common case between line breaks.
                if digits == 0 && padding == 0 {
                    var filled = outCount
                    while index + 4 <= length && filled + 3 <= Self.outCapacity {
                        let a = table[Int(bytes[index])], b = table[Int(bytes[index + 1])]
                        let c = table[Int(bytes[index + 2])], d = table[Int(bytes[index + 3])]
                        guard (a | b | c | d) < 64 else { break }
                        let value = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                        out[filled] = UInt8(truncatingIfNeeded: value >> 16)
                        out[filled + 1] = UInt8(truncatingIfNeeded: value >> 8)
                        out[filled + 2] = UInt8(truncatingIfNeeded: value)
                        filled += 3
                        index += 4
                    }
                    outCount = filled
                    if outCount > Self.outCapacity - 64 { continue }
                    if index >= length { break }
                }
                let value = table[Int(bytes[index])]
                if value < 64 {
                    guard padding == 0 else { throw NotBase64() }
                    group = group << 6 | UInt32(value)
                    digits += 1
                    if digits == 4 {
                        append(UInt8(truncatingIfNeeded: group >> 16))
                        append(UInt8(truncatingIfNeeded: group >> 8))
                        append(UInt8(truncatingIfNeeded: group))
                        digits = 0
                        group = 0
                    }
                } else if value == Self.pad {
                    // "xx==" or "xxx=": padding completes the last group.
                    guard digits + padding >= 2, digits + padding < 4 else { throw NotBase64() }
                    padding += 1
                    if digits + padding == 4 {
                        if digits == 2 { append(UInt8(truncatingIfNeeded: group >> 4)) }
                        if digits == 3 {
                            append(UInt8(truncatingIfNeeded: group >> 10))
                            append(UInt8(truncatingIfNeeded: group >> 2))
                        }
                        digits = 4  // complete: only white space may follow
                    }
                } else if value != Self.space {
                    stop = index
                    break
                }
                index += 1
            }
        }
        try flush(output)
        return stop
    }

    private func append(_ byte: UInt8) {
        out[outCount] = byte
        outCount += 1
    }

    /// Ends the text: throws when it stopped inside a group.
    func finish(output: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard digits == 0 || (padding > 0 && digits == 4) else { throw NotBase64() }
        try flush(output)
        out.update(repeating: 0, count: Self.outCapacity)
    }

    private func flush(_ output: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard outCount > 0 else { return }
        count += Int64(outCount)
        let ready = outCount
        outCount = 0
        try output(UnsafeRawBufferPointer(start: out, count: ready))
    }
}

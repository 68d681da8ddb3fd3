import Crypto

/// XML's base64Binary decoded as the text arrives, in pieces cut anywhere: the white space
/// between groups (space, tab, CR, LF) is dropped; any other byte that is not base64, padding
/// anywhere but at the end, or a last group left short is refused. Decoded bytes go to `output`
/// in pieces of at most 48 KiB.
struct CDOC1Base64Decoder {
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
    private var out: [UInt8] = []
    /// Bytes decoded so far.
    private(set) var count: Int64 = 0

    struct NotBase64: Error {}

    init() { out.reserveCapacity(1 << 16) }

    mutating func take(_ text: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void) throws {
        for byte in text {
            let value = Self.table[Int(byte)]
            if value < 64 {
                guard padding == 0 else { throw NotBase64() }
                group = group << 6 | UInt32(value)
                digits += 1
                if digits == 4 {
                    out.append(UInt8(truncatingIfNeeded: group >> 16))
                    out.append(UInt8(truncatingIfNeeded: group >> 8))
                    out.append(UInt8(truncatingIfNeeded: group))
                    digits = 0
                    group = 0
                    if out.count >= 48 << 10 { try flush(output) }
                }
            } else if value == Self.pad {
                // "xx==" or "xxx=": padding completes the last group.
                guard digits + padding >= 2, digits + padding < 4 else { throw NotBase64() }
                padding += 1
                if digits + padding == 4 {
                    if digits == 2 { out.append(UInt8(truncatingIfNeeded: group >> 4)) }
                    if digits == 3 {
                        out.append(UInt8(truncatingIfNeeded: group >> 10))
                        out.append(UInt8(truncatingIfNeeded: group >> 2))
                    }
                    digits = 4  // complete: only white space may follow
                }
            } else if value != Self.space {
                throw NotBase64()
            }
        }
        try flush(output)
    }

    /// Ends the text: throws when it stopped inside a group.
    mutating func finish(output: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard digits == 0 || (padding > 0 && digits == 4) else { throw NotBase64() }
        try flush(output)
        SecretBytes.zero(&out)
    }

    private mutating func flush(_ output: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard !out.isEmpty else { return }
        count += Int64(out.count)
        try out.withUnsafeBytes { try output($0) }
        out.removeAll(keepingCapacity: true)
    }
}

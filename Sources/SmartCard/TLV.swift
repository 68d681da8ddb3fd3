/// BER-TLV as cards use it (ISO 7816-4): one- to three-byte tags, lengths up to 0x82 xx xx.
/// Bounds-checked: a malformed answer gives nil, never a crash.
public struct TLV: Sendable, Equatable {
    public let tag: [UInt8]
    public let value: [UInt8]

    /// Constructed tags (bit 6 of the first byte) hold more TLVs.
    public var isConstructed: Bool { tag.first.map { $0 & 0x20 != 0 } ?? false }

    /// The TLVs that follow one another in `bytes`; nil if any is cut short.
    public static func parse(_ bytes: [UInt8]) -> [TLV]? {
        var items: [TLV] = []
        var index = 0
        while index < bytes.count {
            // Padding between objects (00 or FF) is allowed by ISO 7816-4.
            if bytes[index] == 0x00 || bytes[index] == 0xFF { index += 1; continue }
            var tag = [bytes[index]]
            index += 1
            if tag[0] & 0x1F == 0x1F {
                repeat {
                    guard index < bytes.count, tag.count < 4 else { return nil }
                    tag.append(bytes[index])
                    index += 1
                } while tag.last! & 0x80 != 0
            }
            guard index < bytes.count else { return nil }
            var length = Int(bytes[index])
            index += 1
            if length > 0x80 {
                let count = length - 0x80
                guard count <= 3, index + count <= bytes.count else { return nil }
                length = bytes[index..<(index + count)].reduce(0) { $0 << 8 | Int($1) }
                index += count
            } else if length == 0x80 {
                return nil
            }
            guard index + length <= bytes.count else { return nil }
            items.append(TLV(tag: tag, value: Array(bytes[index..<(index + length)])))
            index += length
        }
        return items
    }

    /// The value of the first object with `tag`, searched depth-first through constructed ones.
    public static func find(_ tag: [UInt8], in bytes: [UInt8]) -> [UInt8]? {
        guard let items = parse(bytes) else { return nil }
        for item in items {
            if item.tag == tag { return item.value }
            if item.isConstructed, let inner = find(tag, in: item.value) { return inner }
        }
        return nil
    }

    /// A big-endian unsigned number (file sizes, counters); nil if longer than 4 bytes.
    public static func number(_ bytes: [UInt8]) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 4 else { return nil }
        return bytes.reduce(0) { $0 << 8 | Int($1) }
    }
}

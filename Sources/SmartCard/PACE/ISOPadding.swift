/// ISO/IEC 7816-4 padding (ISO/IEC 9797-1 method 2) to the AES block: `80`, then zeros up to
/// a multiple of 16; always at least one byte is added.
enum ISOPadding {
    static func pad(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes + [0x80]
        out += [UInt8](repeating: 0, count: (16 - out.count % 16) % 16)
        return out
    }

    /// Removes the padding; nil when the bytes do not end with `80 00…`.
    static func unpad(_ bytes: [UInt8]) -> [UInt8]? {
        guard let last = bytes.lastIndex(where: { $0 != 0 }), bytes[last] == 0x80, bytes.count - last <= 16 else { return nil }
        return Array(bytes[..<last])
    }
}

/// One BER-TLV data object, as PACE (DER in EF.CardAccess, `7C` dynamic authentication data),
/// secure messaging (`87`, `99`, `8E`) and the card applications (FCI, retry counters) use them. Tags of up to three bytes, definite lengths
/// of up to three length bytes; every read is bounds-checked, so hostile bytes give an error.
public struct TLV: Equatable, Sendable {
    public var tag: UInt32
    public var value: [UInt8]

    public init(tag: UInt32, value: [UInt8]) {
        self.tag = tag
        self.value = value
    }

    /// Tag, length and value as they go on the wire.
    var encoded: [UInt8] { Self.tagBytes(tag) + Self.lengthBytes(value.count) + value }

    /// Constructed (the tag's first byte has bit 6 set): its value is more TLVs.
    public var isConstructed: Bool { Self.tagBytes(tag)[0] & 0x20 != 0 }

    /// The objects one after another in `bytes`, which must be used up exactly.
    public static func sequence(_ bytes: [UInt8]) throws -> [TLV] {
        try sequence(bytes[...])
    }

    static func sequence(_ bytes: ArraySlice<UInt8>) throws -> [TLV] {
        var reader = Reader(bytes: bytes)
        var out: [TLV] = []
        while !reader.atEnd { out.append(try reader.next()) }
        return out
    }

    /// Exactly one object filling `bytes`.
    static func single(_ bytes: [UInt8]) throws -> TLV {
        let all = try sequence(bytes)
        guard all.count == 1 else { throw CardError.malformed("expected one data object, found \(all.count)") }
        return all[0]
    }

    /// Walks a byte string one object at a time; `offset` says where the next one starts.
    struct Reader {
        let bytes: ArraySlice<UInt8>
        private(set) var offset: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            offset = bytes.startIndex
        }

        var atEnd: Bool { offset >= bytes.endIndex }

        mutating func next() throws -> TLV {
            let tag = try readTag()
            let length = try readLength()
            guard length <= bytes.endIndex - offset else { throw CardError.malformed("a data object runs past the end") }
            let value = Array(bytes[offset ..< offset + length])
            offset += length
            return TLV(tag: tag, value: value)
        }

        private mutating func byte() throws -> UInt8 {
            guard offset < bytes.endIndex else { throw CardError.malformed("a data object is cut short") }
            defer { offset += 1 }
            return bytes[offset]
        }

        private mutating func readTag() throws -> UInt32 {
            let first = try byte()
            var tag = UInt32(first)
            guard first & 0x1F == 0x1F else { return tag }
            for _ in 0 ..< 2 {
                let next = try byte()
                tag = tag << 8 | UInt32(next)
                if next & 0x80 == 0 { return tag }
            }
            throw CardError.malformed("a tag longer than three bytes")
        }

        private mutating func readLength() throws -> Int {
            let first = try byte()
            guard first & 0x80 != 0 else { return Int(first) }
            let count = Int(first & 0x7F)
            guard (1 ... 3).contains(count) else { throw CardError.malformed("an unsupported length form \(Hex.string([first]))") }
            var length = 0
            for _ in 0 ..< count { length = length << 8 | Int(try byte()) }
            return length
        }
    }

    /// The value of the first object with `tag`, searched depth-first through constructed ones;
    /// nil when there is none or the bytes are malformed.
    public static func find(_ tag: UInt32, in bytes: [UInt8]) -> [UInt8]? {
        guard let objects = try? sequence(bytes) else { return nil }
        for object in objects {
            if object.tag == tag { return object.value }
            if object.isConstructed, let inner = find(tag, in: object.value) { return inner }
        }
        return nil
    }

    /// A big-endian unsigned number (file sizes, counters); nil when empty or over 4 bytes.
    public static func number(_ bytes: [UInt8]) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 4 else { return nil }
        return bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    static func tagBytes(_ tag: UInt32) -> [UInt8] {
        if tag > 0xFFFF { return [UInt8(tag >> 16), UInt8(tag >> 8 & 0xFF), UInt8(tag & 0xFF)] }
        if tag > 0xFF { return [UInt8(tag >> 8), UInt8(tag & 0xFF)] }
        return [UInt8(tag)]
    }

    /// DER definite lengths: short form below 128, else 81 xx / 82 xx xx.
    static func lengthBytes(_ length: Int) -> [UInt8] {
        switch length {
        case ..<0x80: [UInt8(length)]
        case ..<0x100: [0x81, UInt8(length)]
        default: [0x82, UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        }
    }
}

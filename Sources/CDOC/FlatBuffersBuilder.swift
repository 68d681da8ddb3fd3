/// Writes FlatBuffers tables front to back: a table, then the objects it points to (uoffsets
/// only point forward), each aligned as the FlatBuffers verifier expects (vtables to 2, tables,
/// vectors and 4-byte scalars to 4). Enough for the CDOC2 header.
struct FlatBuffersBuilder {
    indirect enum Value {
        case u8(UInt8)
        case i32(Int32)
        case bytes([UInt8])
        case string(String)
        case table([Value?])
        case tables([[Value?]])

        var isInline: Bool {
            switch self { case .u8, .i32: true; default: false }
        }
    }

    private var out: [UInt8] = []

    /// The finished buffer of a root table.
    static func build(root fields: [Value?]) -> [UInt8] {
        var builder = FlatBuffersBuilder()
        builder.out = [0, 0, 0, 0]
        let position = builder.writeTable(fields)
        builder.patch(0, to: position)
        builder.align(4)
        return builder.out
    }

    private mutating func align(_ alignment: Int, reserving extra: Int = 0) {
        while (out.count + extra) % alignment != 0 { out.append(0) }
    }

    private mutating func put32(_ value: UInt32) {
        out += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }

    private mutating func set32(_ value: UInt32, at position: Int) {
        for index in 0 ..< 4 { out[position + index] = UInt8(value >> (8 * UInt32(index)) & 0xFF) }
    }

    private mutating func patch(_ slot: Int, to target: Int) { set32(UInt32(target - slot), at: slot) }

    private mutating func writeTable(_ fields: [Value?]) -> Int {
        // Layout: soffset, then 4-byte fields (offsets and i32), then 1-byte fields.
        var offsets = [Int](repeating: 0, count: fields.count)
        var cursor = 4
        for (id, field) in fields.enumerated() {
            guard let field else { continue }
            if case .u8 = field { continue }
            offsets[id] = cursor
            cursor += 4
        }
        for (id, field) in fields.enumerated() {
            guard let field, case .u8 = field else { continue }
            offsets[id] = cursor
            cursor += 1
        }
        let tableSize = (cursor + 3) / 4 * 4
        let vtableSize = 4 + 2 * fields.count
        align(4, reserving: vtableSize)
        let vtable = out.count
        for value in [vtableSize, tableSize] + offsets { out += [UInt8(value & 0xFF), UInt8(value >> 8)] }
        let table = out.count
        put32(UInt32(table - vtable))
        out += [UInt8](repeating: 0, count: tableSize - 4)
        var pending: [(slot: Int, value: Value)] = []
        for (id, field) in fields.enumerated() {
            guard let field else { continue }
            let at = table + offsets[id]
            switch field {
            case .u8(let value): out[at] = value
            case .i32(let value): set32(UInt32(bitPattern: value), at: at)
            default: pending.append((at, field))
            }
        }
        for (slot, value) in pending { patch(slot, to: writeObject(value)) }
        return table
    }

    private mutating func writeObject(_ value: Value) -> Int {
        switch value {
        case .bytes(let bytes): return writeVector(bytes, terminated: false)
        case .string(let text): return writeVector(Array(text.utf8), terminated: true)
        case .table(let fields): return writeTable(fields)
        case .tables(let tables):
            align(4)
            let vector = out.count
            put32(UInt32(tables.count))
            let slots = tables.indices.map { _ -> Int in
                put32(0)
                return out.count - 4
            }
            for (slot, fields) in zip(slots, tables) { patch(slot, to: writeTable(fields)) }
            return vector
        case .u8, .i32: preconditionFailure("scalars are stored inline")
        }
    }

    private mutating func writeVector(_ bytes: [UInt8], terminated: Bool) -> Int {
        align(4)
        let vector = out.count
        put32(UInt32(bytes.count))
        out += bytes
        if terminated { out.append(0) }
        return vector
    }
}

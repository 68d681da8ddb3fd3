/// A bounds-checked reader of FlatBuffers tables, just enough for the CDOC2 header: vtable
/// lookups, scalars, strings, byte vectors, tables and vectors of tables. Every offset is
/// checked against the buffer before it is followed, and the schema is walked top-down with no
/// recursion on the data, so a hostile header can neither crash the reader nor make it loop.
struct FlatBuffersReader {
    struct Invalid: Error {}
    let bytes: [UInt8]
    /// Offsets may point many times at the same bytes: what is copied out in all is capped, so a
    /// small hostile buffer cannot make the reader allocate without end.
    private final class Budget { var remaining: Int; init(_ remaining: Int) { self.remaining = remaining } }
    private let budget: Budget

    init(_ bytes: [UInt8], copyLimit: Int? = nil) {
        self.bytes = bytes
        budget = Budget(copyLimit ?? 4 * bytes.count + 4096)
    }

    /// Charges `count` copied bytes (or table visits) against the budget.
    func spend(_ count: Int) throws {
        budget.remaining -= count
        guard budget.remaining >= 0 else { throw Invalid() }
    }

    func u8(at position: Int) throws -> UInt8 {
        guard position >= 0, position < bytes.count else { throw Invalid() }
        return bytes[position]
    }

    func u16(at position: Int) throws -> Int {
        guard position >= 0, position <= bytes.count - 2 else { throw Invalid() }
        return Int(bytes[position]) | Int(bytes[position + 1]) << 8
    }

    func u32(at position: Int) throws -> Int {
        guard position >= 0, position <= bytes.count - 4 else { throw Invalid() }
        return Int(bytes[position]) | Int(bytes[position + 1]) << 8 | Int(bytes[position + 2]) << 16 | Int(bytes[position + 3]) << 24
    }

    func i32(at position: Int) throws -> Int { Int(Int32(truncatingIfNeeded: UInt32(try u32(at: position)))) }

    /// The root table (the buffer's first uoffset).
    func root() throws -> FlatBuffersTable { try table(at: try u32(at: 0)) }

    func table(at position: Int) throws -> FlatBuffersTable {
        guard position % 4 == 0 else { throw Invalid() }
        try spend(16)
        let vtable = position - (try i32(at: position))
        let vtableSize = try u16(at: vtable)
        let tableSize = try u16(at: vtable + 2)
        guard vtable % 2 == 0, vtableSize >= 4, vtableSize % 2 == 0, vtable + vtableSize <= bytes.count,
              tableSize >= 4, position + tableSize <= bytes.count else { throw Invalid() }
        return FlatBuffersTable(reader: self, position: position, vtable: vtable, vtableSize: vtableSize, tableSize: tableSize)
    }

    /// Follows a uoffset stored at `position`.
    func follow(_ position: Int) throws -> Int {
        let target = position + (try u32(at: position))
        guard target < bytes.count else { throw Invalid() }
        return target
    }

    /// A vector at `position`: its element count and where the elements start, after checking
    /// that `count × elementSize` bytes are there.
    func vector(at position: Int, elementSize: Int) throws -> (count: Int, start: Int) {
        guard position % 4 == 0 else { throw Invalid() }
        let count = try u32(at: position)
        let start = position + 4
        guard count <= (bytes.count - start) / elementSize else { throw Invalid() }
        return (count, start)
    }
}

struct FlatBuffersTable {
    let reader: FlatBuffersReader
    let position: Int
    let vtable: Int
    let vtableSize: Int
    let tableSize: Int

    /// Where field `id` is stored, if present; the field's `size` bytes must lie inside the table.
    func field(_ id: Int, size: Int) throws -> Int? {
        let slot = 4 + 2 * id
        guard slot + 2 <= vtableSize else { return nil }
        let offset = try reader.u16(at: vtable + slot)
        guard offset != 0 else { return nil }
        guard offset >= 4, offset + size <= tableSize else { throw FlatBuffersReader.Invalid() }
        return position + offset
    }

    func u8(_ id: Int, default value: UInt8 = 0) throws -> UInt8 {
        guard let at = try field(id, size: 1) else { return value }
        return try reader.u8(at: at)
    }

    func i32(_ id: Int, default value: Int = 0) throws -> Int {
        guard let at = try field(id, size: 4) else { return value }
        return try reader.i32(at: at)
    }

    func bytes(_ id: Int) throws -> [UInt8]? {
        guard let at = try field(id, size: 4) else { return nil }
        let (count, start) = try reader.vector(at: try reader.follow(at), elementSize: 1)
        try reader.spend(count)
        return Array(reader.bytes[start ..< start + count])
    }

    /// A string field, as UTF-8 (invalid sequences replaced: labels are for display).
    func string(_ id: Int) throws -> String? {
        guard let raw = try bytes(id) else { return nil }
        return String(decoding: raw, as: UTF8.self)
    }

    func table(_ id: Int) throws -> FlatBuffersTable? {
        guard let at = try field(id, size: 4) else { return nil }
        return try reader.table(at: try reader.follow(at))
    }

    func tables(_ id: Int) throws -> [FlatBuffersTable]? {
        guard let at = try field(id, size: 4) else { return nil }
        let (count, start) = try reader.vector(at: try reader.follow(at), elementSize: 4)
        return try (0 ..< count).map { try reader.table(at: try reader.follow(start + 4 * $0)) }
    }
}

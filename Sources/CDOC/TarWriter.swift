/// Writes the tar of a CDOC2 payload as libcdoc does (spec §2.5): minimal pre-POSIX headers
/// (name, mode, size, checksum, type `0`), a PAX `x` record before a member whose name is 100
/// bytes or longer or not plain ASCII (`path=`) or whose size passes octal 7777777 (`size=`),
/// and two zero blocks at the end.
struct TarWriter {
    static let block = 512

    /// The header blocks of one file (PAX member first when needed).
    static func header(name: String, size: Int64) -> [UInt8] {
        let nameBytes = Array(name.utf8)
        var records: [UInt8] = []
        if nameBytes.count >= 100 || nameBytes.contains(where: { $0 < 0x20 || $0 >= 0x80 }) {
            records += paxRecord("path", nameBytes)
        }
        if size > 0o7777777 { records += paxRecord("size", Array(String(size).utf8)) }
        var out: [UInt8] = []
        if !records.isEmpty {
            out += block(name: Array("././@PaxHeader".utf8), size: Int64(records.count), type: UInt8(ascii: "x"))
            out += records + [UInt8](repeating: 0, count: padding(after: Int64(records.count)))
        }
        out += block(name: Array(nameBytes.prefix(100)), size: size, type: UInt8(ascii: "0"))
        return out
    }

    static func padding(after length: Int64) -> Int { Int((Int64(block) - length % Int64(block)) % Int64(block)) }

    static let end = [UInt8](repeating: 0, count: 2 * block)

    /// "LEN key=value\n", LEN counting itself.
    static func paxRecord(_ key: String, _ value: [UInt8]) -> [UInt8] {
        let body = Array(" \(key)=".utf8) + value + [0x0A]
        var length = body.count + 1
        while String(length).utf8.count + body.count != length { length += 1 }
        return Array(String(length).utf8) + body
    }

    private static func block(name: [UInt8], size: Int64, type: UInt8) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: block)
        header.replaceSubrange(0 ..< name.count, with: name)
        put(octal: 0o644, width: 8, at: 100, in: &header)
        // Sizes past 11 octal digits live only in the PAX record.
        put(octal: min(size, 0o77777777777), width: 12, at: 124, in: &header)
        header[156] = type
        for index in 148 ..< 156 { header[index] = 0x20 }
        let sum = header.reduce(0) { $0 + Int64($1) }
        put(octal: sum, width: 8, at: 148, in: &header)
        return header
    }

    /// width−1 octal digits and a NUL.
    private static func put(octal value: Int64, width: Int, at offset: Int, in header: inout [UInt8]) {
        var digits = Array(String(value, radix: 8).utf8)
        while digits.count < width - 1 { digits.insert(0x30, at: 0) }
        header.replaceSubrange(offset ..< offset + width, with: digits + [0])
    }
}

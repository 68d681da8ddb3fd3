import Foundation

/// The ZIP on-disk records we read and write (APPNOTE 6.3.x), in one place.
enum ZipSignature {
    static let localHeader: UInt32 = 0x0403_4b50
    static let centralHeader: UInt32 = 0x0201_4b50
    static let endOfCentralDirectory: UInt32 = 0x0605_4b50
    static let zip64EndOfCentralDirectory: UInt32 = 0x0606_4b50
    static let zip64Locator: UInt32 = 0x0706_4b50
    static let dataDescriptor: UInt32 = 0x0807_4b50
}

enum ZipMethod {
    static let stored: UInt16 = 0
    static let deflated: UInt16 = 8
}

enum ZipFlag {
    static let encrypted: UInt16 = 1 << 0
    static let dataDescriptor: UInt16 = 1 << 3
    static let strongEncryption: UInt16 = 1 << 6
    static let utf8Names: UInt16 = 1 << 11
}

enum ZipExtra {
    static let zip64: UInt16 = 0x0001
    static let extendedTimestamp: UInt16 = 0x5455
}

/// Sizes and offsets at or above this need ZIP64 fields.
let zip64Threshold: UInt64 = 0xFFFF_FFFF

/// Little-endian reading over a byte array, with bounds checks that throw instead of trapping.
struct ByteReader {
    let bytes: [UInt8]
    var position: Int

    init(_ bytes: [UInt8], at position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    var remaining: Int { bytes.count - position }

    mutating func u8() throws -> UInt8 {
        guard position + 1 <= bytes.count else { throw ContainerError.corruptZip("a record is cut short") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func u16() throws -> UInt16 {
        guard position + 2 <= bytes.count else { throw ContainerError.corruptZip("a record is cut short") }
        defer { position += 2 }
        return UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
    }

    mutating func u32() throws -> UInt32 {
        guard position + 4 <= bytes.count else { throw ContainerError.corruptZip("a record is cut short") }
        var value: UInt32 = 0
        for i in 0..<4 { value |= UInt32(bytes[position + i]) << (8 * i) }
        position += 4
        return value
    }

    mutating func u64() throws -> UInt64 {
        guard position + 8 <= bytes.count else { throw ContainerError.corruptZip("a record is cut short") }
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(bytes[position + i]) << (8 * i) }
        position += 8
        return value
    }

    mutating func take(_ count: Int) throws -> [UInt8] {
        guard count >= 0, position + count <= bytes.count else { throw ContainerError.corruptZip("a record is cut short") }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    mutating func skip(_ count: Int) throws {
        guard count >= 0, position + count <= bytes.count else { throw ContainerError.corruptZip("a record is cut short") }
        position += count
    }
}

/// Little-endian writing into a growing byte array.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u16(_ v: UInt16) { bytes.append(UInt8(v & 0xff)); bytes.append(UInt8(v >> 8)) }
    mutating func u32(_ v: UInt32) { for i in 0..<4 { bytes.append(UInt8((v >> (8 * UInt32(i))) & 0xff)) } }
    mutating func u64(_ v: UInt64) { for i in 0..<8 { bytes.append(UInt8((v >> (8 * UInt64(i))) & 0xff)) } }
    mutating func append(_ b: [UInt8]) { bytes.append(contentsOf: b) }
}

/// MS-DOS date and time as stored in ZIP headers (local time, two-second resolution).
struct DOSDateTime: Equatable, Sendable {
    var time: UInt16
    var date: UInt16

    init(time: UInt16, date: UInt16) {
        self.time = time
        self.date = date
    }

    init(_ when: Date) {
        var t = time_t(max(when.timeIntervalSince1970, 315_532_800)) // DOS dates start in 1980
        var parts = tm()
        localtime_r(&t, &parts)
        let year = max(0, min(127, Int(parts.tm_year) + 1900 - 1980))
        date = UInt16(year << 9 | Int(parts.tm_mon + 1) << 5 | Int(parts.tm_mday))
        time = UInt16(Int(parts.tm_hour) << 11 | Int(parts.tm_min) << 5 | Int(parts.tm_sec) / 2)
    }

    var asDate: Date {
        var parts = tm()
        parts.tm_year = Int32((date >> 9) & 0x7f) + 80
        parts.tm_mon = Int32((date >> 5) & 0x0f) - 1
        parts.tm_mday = Int32(date & 0x1f)
        parts.tm_hour = Int32((time >> 11) & 0x1f)
        parts.tm_min = Int32((time >> 5) & 0x3f)
        parts.tm_sec = Int32(time & 0x1f) * 2
        parts.tm_isdst = -1
        let t = mktime(&parts)
        return Date(timeIntervalSince1970: TimeInterval(t))
    }
}

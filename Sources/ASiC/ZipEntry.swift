import Foundation

/// One entry of a ZIP central directory: what the archive declares about a member.
public struct ZipEntry: Sendable, Equatable {
    public var name: String
    var rawName: [UInt8]
    public var method: UInt16
    var flags: UInt16
    public var crc32: UInt32
    public var compressedSize: UInt64
    public var uncompressedSize: UInt64
    var localHeaderOffset: UInt64
    var dosDateTime: DOSDateTime
    /// Exact modification time from an extended-timestamp extra field, when present.
    var unixModified: Date?
    var versionMadeBy: UInt16
    var externalAttributes: UInt32
    /// Central extra fields other than ZIP64 (which is regenerated on write).
    var centralExtra: [UInt8]
    var comment: [UInt8]

    public var isDirectory: Bool { name.hasSuffix("/") }
    public var isDeflated: Bool { method == ZipMethod.deflated }
    public var modified: Date { unixModified ?? dosDateTime.asDate }
}

/// The parsed end of a ZIP file: where the central directory is and what it holds.
struct ZipDirectory {
    var entries: [ZipEntry]
    var centralDirectoryOffset: UInt64
    var centralDirectorySize: UInt64

    /// Reads and checks the central directory. Bounded work: the directory must fit in the file,
    /// and the entry count must match what the end record declares.
    static func read(from file: PosixFile) throws -> ZipDirectory {
        let fileSize = try file.size()
        if fileSize == 0 { throw ContainerError.corruptZip("the file is empty (0 bytes)") }
        if fileSize < 22 { throw ContainerError.corruptZip("the file is too short to be a ZIP (\(fileSize) bytes)") }

        // The end record is in the last 22 + 65535 bytes (its comment can be up to 64 KiB).
        let tailLength = Int(min(fileSize, 22 + 65_535))
        let tailStart = fileSize - Int64(tailLength)
        let tail = try file.read(count: tailLength, at: tailStart)
        var eocdIndex: Int? = nil
        var i = tail.count - 22
        while i >= 0 {
            if tail[i] == 0x50, tail[i + 1] == 0x4b, tail[i + 2] == 0x05, tail[i + 3] == 0x06 {
                let commentLength = Int(tail[i + 20]) | Int(tail[i + 21]) << 8
                if i + 22 + commentLength <= tail.count { eocdIndex = i; break }
            }
            i -= 1
        }
        guard let eocd = eocdIndex else {
            throw ContainerError.corruptZip("no end-of-central-directory record (not a ZIP, or truncated)")
        }
        let eocdOffset = tailStart + Int64(eocd)
        var r = ByteReader(tail, at: eocd + 4)
        let diskNumber = try r.u16()
        let cdDisk = try r.u16()
        let entriesOnDisk = try r.u16()
        var entryCount = UInt64(try r.u16())
        var cdSize = UInt64(try r.u32())
        var cdOffset = UInt64(try r.u32())
        if diskNumber != 0 || cdDisk != 0 || UInt64(entriesOnDisk) != entryCount {
            if diskNumber != 0xFFFF { throw ContainerError.unsupported("multi-volume (split) ZIP archives") }
        }

        // ZIP64: a locator sits right before the end record.
        var directoryEnd = eocdOffset
        if eocdOffset >= 20 {
            let locator = try file.read(count: 20, at: eocdOffset - 20)
            var l = ByteReader(locator)
            if try l.u32() == ZipSignature.zip64Locator {
                _ = try l.u32()
                let zip64EndOffset = try l.u64()
                guard zip64EndOffset <= UInt64(eocdOffset - 20), UInt64(eocdOffset - 20) - zip64EndOffset >= 56 else {
                    throw ContainerError.corruptZip("the ZIP64 end record points outside the file")
                }
                let record = try file.read(count: 56, at: Int64(zip64EndOffset))
                var z = ByteReader(record)
                guard try z.u32() == ZipSignature.zip64EndOfCentralDirectory else {
                    throw ContainerError.corruptZip("the ZIP64 end record is missing")
                }
                try z.skip(8 + 2 + 2 + 4 + 4)
                _ = try z.u64() // entries on this disk
                entryCount = try z.u64()
                cdSize = try z.u64()
                cdOffset = try z.u64()
                directoryEnd = Int64(zip64EndOffset)
            }
        }

        guard cdOffset <= UInt64(directoryEnd), cdSize <= UInt64(directoryEnd) - cdOffset else {
            throw ContainerError.corruptZip("the central directory lies outside the file")
        }
        // Bytes put before the archive (a self-extractor stub, a header) move the whole ZIP: its
        // directory then sits that far after where the end record says. Say so rather than fail
        // later on a "damaged" directory; offsets inside a signed container are not rewritten.
        let expectedStart = UInt64(directoryEnd) - cdSize
        if cdOffset < expectedStart, cdSize >= 4,
           try file.read(count: 4, at: Int64(expectedStart)) == [0x50, 0x4B, 0x01, 0x02] {
            throw ContainerError.corruptZip("it has \(expectedStart - cdOffset) bytes before its ZIP data (a prefix, such as a self-extractor stub); asicfs opens only ZIP files that start at their first byte")
        }
        // Every central record is at least 46 bytes: a count beyond that is a lie.
        guard entryCount <= cdSize / 46 else {
            throw ContainerError.corruptZip("the archive declares more entries than its directory can hold")
        }
        // Bounded memory: the whole directory is parsed at once.
        guard cdSize <= 128 << 20, entryCount <= 1_000_000 else {
            throw ContainerError.unsupported("more than 1,000,000 entries or a central directory over 128 MiB")
        }

        let cd = try file.read(count: Int(cdSize), at: Int64(cdOffset))
        guard cd.count == Int(cdSize) else { throw ContainerError.corruptZip("the central directory is truncated") }
        var reader = ByteReader(cd)
        var entries: [ZipEntry] = []
        entries.reserveCapacity(Int(entryCount))
        for _ in 0..<entryCount {
            entries.append(try readCentralRecord(&reader))
        }
        return ZipDirectory(entries: entries, centralDirectoryOffset: cdOffset, centralDirectorySize: cdSize)
    }

    private static func readCentralRecord(_ r: inout ByteReader) throws -> ZipEntry {
        guard try r.u32() == ZipSignature.centralHeader else {
            throw ContainerError.corruptZip("a central directory record is damaged")
        }
        let versionMadeBy = try r.u16()
        _ = try r.u16() // version needed
        let flags = try r.u16()
        let method = try r.u16()
        let time = try r.u16()
        let date = try r.u16()
        let crc = try r.u32()
        var compressed = UInt64(try r.u32())
        var uncompressed = UInt64(try r.u32())
        let nameLength = Int(try r.u16())
        let extraLength = Int(try r.u16())
        let commentLength = Int(try r.u16())
        let disk = try r.u16()
        _ = try r.u16() // internal attributes
        let external = try r.u32()
        var offset = UInt64(try r.u32())
        let rawName = try r.take(nameLength)
        let extra = try r.take(extraLength)
        let comment = try r.take(commentLength)

        var keptExtra: [UInt8] = []
        var unixModified: Date? = nil
        var x = ByteReader(extra)
        while x.remaining >= 4 {
            let id = try x.u16()
            let size = Int(try x.u16())
            guard size <= x.remaining else { break }
            let body = try x.take(size)
            if id == ZipExtra.zip64 {
                // Only the fields whose 32-bit value is saturated are present, in this order.
                var z = ByteReader(body)
                if uncompressed == zip64Threshold { uncompressed = try z.u64() }
                if compressed == zip64Threshold { compressed = try z.u64() }
                if offset == zip64Threshold { offset = try z.u64() }
            } else {
                if id == ZipExtra.extendedTimestamp, body.count >= 5, body[0] & 1 == 1 {
                    var t = ByteReader(body, at: 1)
                    unixModified = Date(timeIntervalSince1970: TimeInterval(Int32(bitPattern: try t.u32())))
                }
                var w = ByteWriter()
                w.u16(id); w.u16(UInt16(size)); w.append(body)
                keptExtra += w.bytes
            }
        }
        if disk != 0 && disk != 0xFFFF { throw ContainerError.unsupported("multi-volume (split) ZIP archives") }
        // Sizes and offsets are file positions: anything past Int64 cannot be real.
        let limit = UInt64(Int64.max)
        guard compressed <= limit, uncompressed <= limit, offset <= limit else {
            throw ContainerError.corruptZip("an entry declares a size or offset beyond any file")
        }
        return ZipEntry(
            name: decodeName(rawName, flags: flags), rawName: rawName, method: method, flags: flags,
            crc32: crc, compressedSize: compressed, uncompressedSize: uncompressed, localHeaderOffset: offset,
            dosDateTime: DOSDateTime(time: time, date: date), unixModified: unixModified,
            versionMadeBy: versionMadeBy, externalAttributes: external, centralExtra: keptExtra, comment: comment)
    }

    /// Names are UTF-8 when flagged, and in practice usually UTF-8 when not; the rest is IBM 437.
    static func decodeName(_ raw: [UInt8], flags: UInt16) -> String {
        if let s = String(validating: raw, as: UTF8.self) { return s }
        return String(raw.map { Character(Unicode.Scalar(cp437[Int($0)])!) })
    }

    private static let cp437: [UInt32] = {
        let high: [UInt32] = [
            0xC7, 0xFC, 0xE9, 0xE2, 0xE4, 0xE0, 0xE5, 0xE7, 0xEA, 0xEB, 0xE8, 0xEF, 0xEE, 0xEC, 0xC4, 0xC5,
            0xC9, 0xE6, 0xC6, 0xF4, 0xF6, 0xF2, 0xFB, 0xF9, 0xFF, 0xD6, 0xDC, 0xA2, 0xA3, 0xA5, 0x20A7, 0x192,
            0xE1, 0xED, 0xF3, 0xFA, 0xF1, 0xD1, 0xAA, 0xBA, 0xBF, 0x2310, 0xAC, 0xBD, 0xBC, 0xA1, 0xAB, 0xBB,
            0x2591, 0x2592, 0x2593, 0x2502, 0x2524, 0x2561, 0x2562, 0x2556, 0x2555, 0x2563, 0x2551, 0x2557, 0x255D, 0x255C, 0x255B, 0x2510,
            0x2514, 0x2534, 0x252C, 0x251C, 0x2500, 0x253C, 0x255E, 0x255F, 0x255A, 0x2554, 0x2569, 0x2566, 0x2560, 0x2550, 0x256C, 0x2567,
            0x2568, 0x2564, 0x2565, 0x2559, 0x2558, 0x2552, 0x2553, 0x256B, 0x256A, 0x2518, 0x250C, 0x2588, 0x2584, 0x258C, 0x2590, 0x2580,
            0x3B1, 0xDF, 0x393, 0x3C0, 0x3A3, 0x3C3, 0xB5, 0x3C4, 0x3A6, 0x398, 0x3A9, 0x3B4, 0x221E, 0x3C6, 0x3B5, 0x2229,
            0x2261, 0xB1, 0x2265, 0x2264, 0x2320, 0x2321, 0xF7, 0x2248, 0xB0, 0x2219, 0xB7, 0x221A, 0x207F, 0xB2, 0x25A0, 0xA0,
        ]
        return (0..<128).map { UInt32($0) } + high
    }()
}

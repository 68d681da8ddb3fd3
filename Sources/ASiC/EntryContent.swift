import Foundation

/// Random access to the uncompressed bytes of one ZIP entry, safe to call from many threads.
public protocol EntryContent: AnyObject, Sendable {
    /// The uncompressed size the archive declares (and that reads are checked against).
    var size: Int64 { get }
    /// Fills `buffer` from `offset`; returns the number of bytes read (short only at the end).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int
    /// A reader for one open file: reads through it continue its own position (see `EntryReader`).
    func makeReader() -> EntryReader
}

extension EntryContent {
    public func makeReader() -> EntryReader { DirectEntryReader(content: self) }
}

/// Reads of one open file. A reader may keep state between reads (a decoder at the furthest
/// offset read, recently produced bytes, work running ahead on a helper thread), so every open
/// file gets its own, and `close` ends what it runs. Safe to call from several threads at once
/// (the kernel sends one open file's readahead on several).
public protocol EntryReader: AnyObject, Sendable {
    var size: Int64 { get }
    /// The same as `EntryContent.read`: fills `buffer` from `offset`, checked the same way.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int
    /// Stops any work running ahead and frees its memory (reads after it still work).
    func close()
}

/// A reader with no state of its own: every read goes to the content.
final class DirectEntryReader: EntryReader {
    let content: EntryContent
    init(content: EntryContent) { self.content = content }
    var size: Int64 { content.size }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try content.read(into: buffer, at: offset)
    }
    func close() {}
}

/// Where an entry's data starts and how long it is, checked against the archive's bounds.
struct EntryLocation: Sendable {
    let name: String
    let dataOffset: Int64
    let compressedSize: Int64
    let uncompressedSize: Int64
    let crc32: UInt32
    let method: UInt16

    /// Reads the local header of `entry` and checks it agrees with the central directory.
    static func resolve(_ entry: ZipEntry, in file: PosixFile, dataLimit: UInt64) throws -> EntryLocation {
        let header = try file.read(count: 30, at: Int64(entry.localHeaderOffset))
        guard header.count == 30 else { throw ContainerError.corruptZip("the local header of '\(entry.name)' is truncated") }
        var r = ByteReader(header)
        guard try r.u32() == ZipSignature.localHeader else {
            throw ContainerError.corruptZip("the local header of '\(entry.name)' is missing")
        }
        try r.skip(4)
        let method = try r.u16()
        try r.skip(16)
        let nameLength = Int(try r.u16())
        let extraLength = Int(try r.u16())
        let localName = try file.read(count: nameLength, at: Int64(entry.localHeaderOffset) + 30)
        guard localName == entry.rawName else {
            throw ContainerError.corruptZip("the local and central names of '\(entry.name)' differ")
        }
        guard method == entry.method else {
            throw ContainerError.corruptZip("the local and central compression methods of '\(entry.name)' differ")
        }
        if method == ZipMethod.stored, entry.compressedSize != entry.uncompressedSize {
            throw ContainerError.dataMismatch(entry.name, reason: "a stored entry's sizes disagree")
        }
        let dataOffset = entry.localHeaderOffset + 30 + UInt64(nameLength) + UInt64(extraLength)
        guard dataOffset <= dataLimit, entry.compressedSize <= dataLimit - dataOffset else {
            throw ContainerError.corruptZip("the data of '\(entry.name)' runs past the central directory")
        }
        return EntryLocation(
            name: entry.name, dataOffset: Int64(dataOffset), compressedSize: Int64(entry.compressedSize),
            uncompressedSize: Int64(entry.uncompressedSize), crc32: entry.crc32, method: entry.method)
    }
}

/// A stored (uncompressed) entry: reads go straight to the file (or, for an open file read
/// sequentially, through a `DirectReadAhead`: see `StoredEntryReader`), and their CRC-32s add
/// up to one check of the entry (`EntryIntegrity`); a read that reaches the end reads whatever
/// was skipped, so a reader that gets to the end never gets damaged bytes without an error.
final class StoredEntryContent: EntryContent {
    let file: PosixFile
    let location: EntryLocation
    var size: Int64 { location.uncompressedSize }
    private let integrity: EntryIntegrity
    private let directReads: DirectReads

    /// `location` comes from `EntryLocation.resolve`, which has checked that both sizes agree.
    init(file: PosixFile, location: EntryLocation, directReads: DirectReads) {
        self.file = file
        self.location = location
        self.directReads = directReads
        integrity = EntryIntegrity(location)
    }

    func makeReader() -> EntryReader { StoredEntryReader(content: self) }

    /// A read-ahead stream from `offset` on, or nil (the file system refuses O_DIRECT, or enough
    /// streams run already).
    func readAhead(from offset: Int64) -> DirectReadAhead? {
        directReads.stream(over: location.dataOffset..<location.dataOffset + size, from: location.dataOffset + offset)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try read(into: buffer, at: offset, through: nil)
    }

    /// `read`, taking the bytes from `stream` where it has them.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, through stream: DirectReadAhead?) throws -> Int {
        guard offset >= 0 else { return 0 }
        let count = Int(max(0, min(Int64(buffer.count), size - offset)))
        if count == 0 {
            // An empty entry is all there at once: its CRC can be checked now.
            if size == 0 { try integrity.check() }
            return 0
        }
        let target = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
        if integrity.isVerified {
            try fill(target, at: location.dataOffset + offset, through: stream)
            return count
        }
        try integrity.checkUsable()
        try fill(target, at: location.dataOffset + offset, through: stream)
        let bytes = UnsafeRawBufferPointer(target)
        try integrity.record(bytes, at: offset, crc: crc32Update(0, bytes))
        if offset + Int64(count) == size { try readGaps() }
        try integrity.check()
        return count
    }

    private func fill(_ target: UnsafeMutableRawBufferPointer, at position: Int64, through stream: DirectReadAhead?) throws {
        if let stream, stream.read(into: target, at: position) { return }
        try file.read(into: target, at: position)
    }

    /// Reads (and checks) every byte no reader asked for yet.
    private func readGaps() throws {
        let gaps = integrity.gaps
        guard !gaps.isEmpty else { return }
        let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { piece.deallocate() }
        for gap in gaps {
            var position = gap.lowerBound
            while position < gap.upperBound {
                let n = Int(min(Int64(piece.count), gap.upperBound - position))
                let target = UnsafeMutableRawBufferPointer(rebasing: piece[0..<n])
                try file.read(into: target, at: location.dataOffset + position)
                try integrity.record(UnsafeRawBufferPointer(target), at: position)
                position += Int64(n)
            }
        }
    }
}

import Crypto
import Foundation

/// Writes ZIP entries and the central directory into a file, ZIP64 where sizes need it.
/// Local headers never use data descriptors: sizes and CRC are patched in after the data,
/// as the reference implementation does.
final class ZipWriter {
    let file: PosixFile
    private(set) var offset: Int64
    /// SHA-256 of every data file written from bytes or a source file, by entry name: computed
    /// from the same buffers that were compressed, so a signing right after the save need not
    /// read (and inflate) them back.
    private(set) var sha256ByName: [String: [UInt8]] = [:]

    init(file: PosixFile, startingAt offset: Int64 = 0) {
        self.file = file
        self.offset = offset
    }

    /// A small entry from memory. `timestampExtra` adds the exact mtime (never on `mimetype`).
    func write(name: String, bytes: [UInt8], compress: Bool, modified: Date, timestampExtra: Bool,
               storeWhenNotSmaller: Bool = true) throws -> ZipEntry {
        var entry = newEntry(name: name, modified: modified, timestampExtra: timestampExtra)
        entry.crc32 = crc32Of(bytes)
        entry.uncompressedSize = UInt64(bytes.count)
        var data = bytes
        if compress {
            let deflated = try deflateAll(bytes)
            // Keep the bytes as they are when deflating does not make them smaller.
            if deflated.count < bytes.count || !storeWhenNotSmaller {
                data = deflated
                entry.method = ZipMethod.deflated
            }
        }
        entry.compressedSize = UInt64(data.count)
        let header = localHeader(for: entry, zip64: false)
        try file.write(header + data, at: offset)
        offset += Int64(header.count + data.count)
        return entry
    }

    /// Small data files prepared beforehand (`SmallFileBatch`), written in pieces of about
    /// 1 MiB rather than one write each.
    func write(_ prepared: [PreparedEntry]) throws -> [ZipEntry] {
        var entries: [ZipEntry] = []
        entries.reserveCapacity(prepared.count)
        var pending: [UInt8] = []
        var pendingAt = offset
        for file in prepared {
            var entry = newEntry(name: file.name, modified: file.modified, timestampExtra: true)
            entry.crc32 = file.crc32
            entry.uncompressedSize = UInt64(file.size)
            entry.compressedSize = UInt64(file.data.count)
            entry.method = file.deflated ? ZipMethod.deflated : ZipMethod.stored
            sha256ByName[file.name] = file.sha256
            let header = localHeader(for: entry, zip64: false)
            pending += header
            pending += file.data
            offset += Int64(header.count + file.data.count)
            entries.append(entry)
            if pending.count >= Self.chunkSize {
                try self.file.write(pending, at: pendingAt)
                pendingAt = offset
                pending.removeAll(keepingCapacity: true)
            }
        }
        if !pending.isEmpty { try self.file.write(pending, at: pendingAt) }
        return entries
    }

    /// A data file streamed from `source`: deflated unless that would not make it smaller.
    /// `known`: the source's CRC-32 and SHA-256 computed before (while it was written); the
    /// SHA-256 is then not computed again, and taken only if the CRC-32 of the bytes written
    /// here matches (otherwise it is computed from the source after all).
    func write(name: String, from source: PosixFile, compress: Bool, level: DeflateLevel, modified: Date,
               known: ContentDigest? = nil, progress: (Int64) -> Void) throws -> ZipEntry {
        let size = try source.size()
        var entry = newEntry(name: name, modified: modified, timestampExtra: true)
        entry.uncompressedSize = UInt64(size)
        // Deflate can grow incompressible data a little: reserve ZIP64 fields early enough.
        let zip64 = UInt64(size) >= 0xFFFF_0000
        entry.method = compress ? ZipMethod.deflated : ZipMethod.stored
        let headerOffset = offset
        let headerLength = localHeader(for: entry, zip64: zip64).count
        let dataOffset = headerOffset + Int64(headerLength)

        var compressed: Int64 = 0
        var crc: UInt32 = 0
        let known = known.flatMap { $0.size == size ? $0 : nil }
        var hasher: Hasher? = known == nil ? Hasher(.sha256) : nil
        // A large file that does not compress (video, encrypted or random data under an unknown
        // name) would be deflated in full only to be stored after all: samples decide first.
        if compress, size >= Self.sampledSize, try !Self.looksCompressible(source, size: size) {
            entry.method = ZipMethod.stored
        }
        if entry.method == ZipMethod.deflated {
            (crc, compressed) = try deflate(source, size: size, level: level, to: dataOffset, hasher: hasher, progress: progress)
            if compressed >= size {
                // Not worth it: store the bytes as they are.
                entry.method = ZipMethod.stored
                if known == nil { hasher = Hasher(.sha256) }
            }
        }
        if entry.method == ZipMethod.stored {
            crc = try store(source, size: size, to: dataOffset, hasher: hasher, progress: progress)
            compressed = size
        }
        guard try source.size() == size else {
            throw ContainerError.refused("'\(source.path)' changed while it was being added")
        }
        entry.crc32 = crc
        entry.compressedSize = UInt64(compressed)
        try file.write(localHeader(for: entry, zip64: zip64), at: headerOffset)
        offset = dataOffset + compressed
        if let hasher {
            sha256ByName[name] = hasher.finish()
        } else if let known, known.crc32 == crc {
            sha256ByName[name] = known.sha256
        } else {
            sha256ByName[name] = try Self.sha256(of: source, size: size)
        }
        return entry
    }

    /// Copies an entry's compressed bytes unchanged, under a fresh local header (and maybe a new name).
    func copy(_ entry: ZipEntry, at location: EntryLocation, from source: PosixFile, renamedTo newName: String?,
              modified: Date?) throws -> ZipEntry {
        var copied = entry
        if let newName {
            copied.name = newName
            copied.rawName = Array(newName.utf8)
        }
        if let modified {
            copied.dosDateTime = DOSDateTime(modified)
            copied.unixModified = modified
            copied.centralExtra = Self.removingExtra(ZipExtra.extendedTimestamp, from: copied.centralExtra)
                + Self.timestampExtra(modified)
        }
        copied.flags &= ~ZipFlag.dataDescriptor
        copied.flags |= ZipFlag.utf8Names
        copied.localHeaderOffset = UInt64(offset)
        let zip64 = copied.compressedSize >= zip64Threshold || copied.uncompressedSize >= zip64Threshold
        let header = localHeader(for: copied, zip64: zip64)
        try file.write(header, at: offset)
        try file.copy(from: source, sourceOffset: location.dataOffset, length: location.compressedSize,
                      to: offset + Int64(header.count))
        offset += Int64(header.count) + location.compressedSize
        return copied
    }

    /// Writes the central directory for `entries` (in that order) and the end records; the file
    /// ends right after them.
    func finish(_ entries: [ZipEntry]) throws {
        var w = ByteWriter()
        for entry in entries { w.append(centralRecord(for: entry)) }
        let cdOffset = UInt64(offset)
        let cdSize = UInt64(w.bytes.count)
        let count = UInt64(entries.count)
        let needsZip64 = count >= 0xFFFF || cdOffset >= zip64Threshold || cdSize >= zip64Threshold
        if needsZip64 {
            let zip64EndOffset = cdOffset + cdSize
            w.u32(ZipSignature.zip64EndOfCentralDirectory)
            w.u64(44)
            w.u16(3 << 8 | 45); w.u16(45)
            w.u32(0); w.u32(0)
            w.u64(count); w.u64(count)
            w.u64(cdSize); w.u64(cdOffset)
            w.u32(ZipSignature.zip64Locator)
            w.u32(0); w.u64(zip64EndOffset); w.u32(1)
        }
        w.u32(ZipSignature.endOfCentralDirectory)
        w.u16(0); w.u16(0)
        w.u16(UInt16(min(count, 0xFFFF))); w.u16(UInt16(min(count, 0xFFFF)))
        w.u32(UInt32(min(cdSize, zip64Threshold)))
        w.u32(UInt32(min(cdOffset, zip64Threshold)))
        w.u16(0)
        try file.write(w.bytes, at: offset)
        offset += Int64(w.bytes.count)
        try file.truncate(to: offset)
    }

    // MARK: - Records

    private func newEntry(name: String, modified: Date, timestampExtra: Bool) -> ZipEntry {
        var extra: [UInt8] = []
        if timestampExtra { extra = Self.timestampExtra(modified) }
        return ZipEntry(
            name: name, rawName: Array(name.utf8), method: ZipMethod.stored, flags: ZipFlag.utf8Names,
            crc32: 0, compressedSize: 0, uncompressedSize: 0, localHeaderOffset: UInt64(offset),
            dosDateTime: DOSDateTime(modified), unixModified: timestampExtra ? modified : nil,
            versionMadeBy: 3 << 8 | 20, externalAttributes: 0o100644 << 16, centralExtra: extra, comment: [])
    }

    /// Extra-field blocks without those of type `id`.
    static func removingExtra(_ id: UInt16, from extra: [UInt8]) -> [UInt8] {
        var kept: [UInt8] = []
        var offset = 0
        while offset + 4 <= extra.count {
            let blockID = UInt16(extra[offset]) | UInt16(extra[offset + 1]) << 8
            let size = Int(extra[offset + 2]) | Int(extra[offset + 3]) << 8
            let end = min(extra.count, offset + 4 + size)
            if blockID != id { kept += extra[offset..<end] }
            offset = end
        }
        return kept
    }

    private static func timestampExtra(_ date: Date) -> [UInt8] {
        var w = ByteWriter()
        w.u16(ZipExtra.extendedTimestamp); w.u16(5)
        w.bytes.append(1)
        w.u32(UInt32(bitPattern: Int32(clamping: Int64(date.timeIntervalSince1970.rounded(.down)))))
        return w.bytes
    }

    private func localHeader(for entry: ZipEntry, zip64: Bool) -> [UInt8] {
        var w = ByteWriter()
        w.u32(ZipSignature.localHeader)
        w.u16(zip64 ? 45 : 20)
        w.u16(entry.flags)
        w.u16(entry.method)
        w.u16(entry.dosDateTime.time); w.u16(entry.dosDateTime.date)
        w.u32(entry.crc32)
        w.u32(zip64 ? UInt32.max : UInt32(entry.compressedSize))
        w.u32(zip64 ? UInt32.max : UInt32(entry.uncompressedSize))
        var extra: [UInt8] = []
        if zip64 {
            var z = ByteWriter()
            z.u16(ZipExtra.zip64); z.u16(16)
            z.u64(entry.uncompressedSize); z.u64(entry.compressedSize)
            extra = z.bytes
        }
        if entry.unixModified != nil, entry.name != EntryName.mimetype {
            extra += Self.timestampExtra(entry.unixModified!)
        }
        w.u16(UInt16(entry.rawName.count))
        w.u16(UInt16(extra.count))
        w.append(entry.rawName)
        w.append(extra)
        return w.bytes
    }

    private func centralRecord(for entry: ZipEntry) -> [UInt8] {
        var zip64 = ByteWriter()
        if entry.uncompressedSize >= zip64Threshold { zip64.u64(entry.uncompressedSize) }
        if entry.compressedSize >= zip64Threshold { zip64.u64(entry.compressedSize) }
        if entry.localHeaderOffset >= zip64Threshold { zip64.u64(entry.localHeaderOffset) }
        var extra: [UInt8] = []
        if !zip64.bytes.isEmpty {
            var z = ByteWriter()
            z.u16(ZipExtra.zip64); z.u16(UInt16(zip64.bytes.count)); z.append(zip64.bytes)
            extra = z.bytes
        }
        extra += entry.centralExtra
        var w = ByteWriter()
        w.u32(ZipSignature.centralHeader)
        w.u16(entry.versionMadeBy)
        w.u16(zip64.bytes.isEmpty ? 20 : 45)
        w.u16(entry.flags)
        w.u16(entry.method)
        w.u16(entry.dosDateTime.time); w.u16(entry.dosDateTime.date)
        w.u32(entry.crc32)
        w.u32(UInt32(min(entry.compressedSize, zip64Threshold)))
        w.u32(UInt32(min(entry.uncompressedSize, zip64Threshold)))
        w.u16(UInt16(entry.rawName.count))
        w.u16(UInt16(extra.count))
        w.u16(UInt16(entry.comment.count))
        w.u16(0); w.u16(0)
        w.u32(entry.externalAttributes)
        w.u32(UInt32(min(entry.localHeaderOffset, zip64Threshold)))
        w.append(entry.rawName)
        w.append(extra)
        w.append(entry.comment)
        return w.bytes
    }

    // MARK: - Data

    /// One compressor for the small entries of a save (a level-3 one holds some 430 KiB of
    /// buffers: worth reusing across the thousands of small files a copy-in can bring).
    private var smallDeflater: Deflater?

    private func deflateAll(_ bytes: [UInt8]) throws -> [UInt8] {
        if smallDeflater == nil { smallDeflater = try Deflater(level: .standard) }
        return try bytes.withUnsafeBytes { try smallDeflater!.compress($0) }
    }

    /// `input` deflated in one call (for compressibility samples).
    private static func deflateAll(_ input: UnsafeRawBufferPointer, level: DeflateLevel) throws -> [UInt8] {
        try Deflater(level: level).compress(input)
    }

    private static let chunkSize = 1 << 20

    /// Sources from this size on are sampled before they are deflated.
    static let sampledSize: Int64 = 16 << 20

    /// Deflates three 1 MiB samples (start, middle, near the end) at the fastest level: the file
    /// is worth deflating when they shrink by at least 2% in all. Costs a few milliseconds
    /// against the seconds a full deflate of an incompressible gigabyte takes.
    static func looksCompressible(_ source: PosixFile, size: Int64) throws -> Bool {
        let sample = chunkSize
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: sample, alignment: 16)
        defer { input.deallocate() }
        var sampled = 0
        var compressed = 0
        for offset in [0, size / 2, size - Int64(sample) - 4096] {
            let piece = UnsafeMutableRawBufferPointer(rebasing: input[0..<sample])
            try source.read(into: piece, at: max(0, offset))
            sampled += sample
            compressed += try deflateAll(UnsafeRawBufferPointer(piece), level: .fastest).count
        }
        return compressed * 100 < sampled * 98
    }

    /// With two cores and a large source, SHA-256 runs on a helper thread over the same chunk
    /// while this thread computes the CRC and writes or deflates it (both only read the chunk).
    private static func hashingHelper(forSize size: Int64) -> HelperThread? {
        size >= 4 << 20 && ProcessInfo.processInfo.activeProcessorCount > 1 ? HelperThread() : nil
    }

    /// Hashes `piece` on `helper` (call `helper.wait()` before the chunk is reused), or here.
    private static func beginHashing(_ piece: UnsafeRawBufferPointer, into hasher: Hasher?, on helper: HelperThread?) {
        guard let hasher else { return }
        nonisolated(unsafe) let piece = piece
        if let helper { helper.begin { hasher.update(piece) } } else { hasher.update(piece) }
    }

    /// The SHA-256 of a source read again (when a digest known before turned out stale).
    private static func sha256(of source: PosixFile, size: Int64) throws -> [UInt8] {
        let hasher = Hasher(.sha256)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var done: Int64 = 0
        while done < size {
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(min(Int64(chunkSize), size - done))])
            try source.read(into: piece, at: done)
            hasher.update(UnsafeRawBufferPointer(piece))
            done += Int64(piece.count)
        }
        return hasher.finish()
    }

    /// Streams `source` through deflate into the file at `at`; returns (crc, compressed size).
    private func deflate(_ source: PosixFile, size: Int64, level: DeflateLevel, to at: Int64, hasher: Hasher?,
                         progress: (Int64) -> Void) throws -> (UInt32, Int64) {
        if let helper = Self.hashingHelper(forSize: size) {
            defer { helper.stop() }
            return try ParallelDeflate(source: source, size: size, level: level, into: file, at: at, hasher: hasher)
                .run(helper: helper, progress: progress)
        }
        let deflater = try Deflater(level: level)
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
        defer { input.deallocate(); output.deallocate() }
        // Declared after the buffers, so it stops (waiting for its job) before they are freed.
        let helper = Self.hashingHelper(forSize: size)
        defer { helper?.stop() }
        var crc: UInt32 = 0
        var read: Int64 = 0
        var written: Int64 = 0
        var finished = false
        while !finished {
            let n = Int(min(Int64(Self.chunkSize), size - read))
            let piece = UnsafeMutableRawBufferPointer(rebasing: input[0..<n])
            if n > 0 { try source.read(into: piece, at: read) }
            Self.beginHashing(UnsafeRawBufferPointer(piece), into: hasher, on: helper)
            crc = crc32Update(crc, UnsafeRawBufferPointer(piece))
            read += Int64(n)
            let last = read >= size
            var taken = 0
            repeat {
                let step: (consumed: Int, produced: Int, ended: Bool)
                do {
                    step = try deflater.deflate(UnsafeRawBufferPointer(rebasing: piece[taken...]), last: last, into: output)
                } catch {
                    throw ContainerError.unsupported("ISA-L failed to compress '\(source.path)'")
                }
                taken += step.consumed
                if step.produced > 0 {
                    try file.write(UnsafeRawBufferPointer(rebasing: output[0..<step.produced]), at: at + written)
                    written += Int64(step.produced)
                }
                if step.ended { finished = true; break }
                // More to do while input is left, or (at the end) while output keeps coming.
                if taken == n && !last && step.produced < output.count { break }
            } while true
            try helper?.wait()
            progress(read)
        }
        return (crc, written)
    }

    /// Copies `source` into the file at `at` unchanged, in one pass that also computes its CRC.
    private func store(_ source: PosixFile, size: Int64, to at: Int64, hasher: Hasher?,
                       progress: (Int64) -> Void) throws -> UInt32 {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        let helper = Self.hashingHelper(forSize: size)
        defer { helper?.stop() }
        var crc: UInt32 = 0
        var done: Int64 = 0
        while done < size {
            let n = Int(min(Int64(Self.chunkSize), size - done))
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<n])
            try source.read(into: piece, at: done)
            Self.beginHashing(UnsafeRawBufferPointer(piece), into: hasher, on: helper)
            crc = crc32Update(crc, UnsafeRawBufferPointer(piece))
            try file.write(UnsafeRawBufferPointer(piece), at: at + done)
            try helper?.wait()
            done += Int64(n)
            progress(done)
        }
        return crc
    }
}

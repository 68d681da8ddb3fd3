/// Which bytes of an entry random reads have delivered so far, with the CRC-32 of each covered
/// range, so that reads in any order (the kernel's readahead sends them out of order) add up to
/// one check of the whole entry against the CRC the archive declares. Adjacent ranges are joined
/// with `CRC32.combine` (zlib's crc32_combine), so reading front to back keeps a single range.
struct CRCCoverage {
    private struct Range {
        var start: Int64
        var end: Int64
        var crc: UInt32
    }

    let size: Int64
    /// Sorted, disjoint and never adjacent (adjacent ones are joined).
    private var ranges: [Range] = []
    /// Past this many separate ranges (scattered small reads), new ones are not kept: the
    /// check then happens when the entry's end is read and the gaps are filled (`gaps`).
    static let rangeLimit = 4096

    init(size: Int64) { self.size = size }

    /// The whole entry is covered: its CRC-32.
    var crcOfWhole: UInt32? {
        if size == 0 { return 0 }
        guard ranges.count == 1, ranges[0].start == 0, ranges[0].end == size else { return nil }
        return ranges[0].crc
    }

    /// Whether `bytes` at `offset` are all covered already.
    func covers(_ offset: Int64, count: Int) -> Bool {
        let end = offset + Int64(count)
        return ranges.contains { $0.start <= offset && $0.end >= end }
    }

    /// Whether nothing in `offset ..< offset + count` is covered yet.
    func isUncovered(_ offset: Int64, count: Int) -> Bool {
        let end = offset + Int64(count)
        return !ranges.contains { $0.start < end && $0.end > offset }
    }

    /// Adds bytes the reader got (`crc`, when given, is their CRC-32, computed by the caller
    /// outside its lock; it is used only when none of them were covered before).
    mutating func record(_ bytes: UnsafeRawBufferPointer, at offset: Int64, crc: UInt32? = nil) {
        let end = offset + Int64(bytes.count)
        guard bytes.count > 0, offset >= 0, end <= size else { return }
        if isUncovered(offset, count: bytes.count) {
            insert(Range(start: offset, end: end, crc: crc ?? crc32Update(0, bytes)))
            return
        }
        // Overlapping an earlier read: add the uncovered pieces only.
        var position = offset
        for covered in ranges where covered.end > offset && covered.start < end {
            if covered.start > position { add(bytes, from: position, to: covered.start, base: offset) }
            position = max(position, covered.end)
        }
        if position < end { add(bytes, from: position, to: end, base: offset) }
    }

    private mutating func add(_ bytes: UnsafeRawBufferPointer, from start: Int64, to end: Int64, base: Int64) {
        let piece = UnsafeRawBufferPointer(rebasing: bytes[Int(start - base)..<Int(end - base)])
        insert(Range(start: start, end: end, crc: crc32Update(0, piece)))
    }

    /// Inserts a range that overlaps none, joining it with its neighbours where they touch.
    private mutating func insert(_ range: Range) {
        var low = 0, high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if ranges[mid].start < range.start { low = mid + 1 } else { high = mid }
        }
        let joinsPrevious = low > 0 && ranges[low - 1].end == range.start
        let joinsNext = low < ranges.count && ranges[low].start == range.end
        switch (joinsPrevious, joinsNext) {
        case (true, true):
            let next = ranges.remove(at: low)
            ranges[low - 1] = Range(start: ranges[low - 1].start, end: next.end,
                                    crc: Self.combine(Self.combine(ranges[low - 1].crc, range), next))
        case (true, false):
            ranges[low - 1] = Range(start: ranges[low - 1].start, end: range.end, crc: Self.combine(ranges[low - 1].crc, range))
        case (false, true):
            ranges[low] = Range(start: range.start, end: ranges[low].end, crc: Self.combine(range.crc, ranges[low]))
        case (false, false):
            guard ranges.count < Self.rangeLimit else { return }
            ranges.insert(range, at: low)
        }
    }

    /// The CRC-32 of the bytes of `first` followed by those of `second`.
    private static func combine(_ first: UInt32, _ second: Range) -> UInt32 {
        CRC32.combine(first, second.crc, secondLength: second.end - second.start)
    }

    /// What is not covered yet, in order.
    var gaps: [Swift.Range<Int64>] {
        var result: [Swift.Range<Int64>] = []
        var position: Int64 = 0
        for range in ranges {
            if range.start > position { result.append(position..<range.start) }
            position = range.end
        }
        if position < size { result.append(position..<size) }
        return result
    }
}

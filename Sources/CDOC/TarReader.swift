/// A tar archive parsed as its bytes arrive (CDOC2 payloads, spec §2.5/§2.7): ustar and the
/// pre-POSIX headers libcdoc writes, PAX `x` records for `path` and `size`, `g` records skipped.
/// Only regular files pass; links, folders and devices are refused, as are unsafe or duplicate
/// names, more than `maximumEntries` files, and anything but zeros after the end blocks. Files
/// go to the sink as they stream by.
final class TarReader {
    static let block = 512
    static let maximumEntries = 1000
    static let maximumPAXRecord = 64 << 10

    private enum State {
        case header
        case pax(remaining: Int64, global: Bool)
        case file(remaining: Int64)
        case padding(remaining: Int)
        case ended
    }

    private let sink: PlainFileSink
    private var state = State.header
    private var pending: [UInt8] = []
    private var paxBytes: [UInt8] = []
    private var paxPath: [UInt8]?
    private var paxSize: Int64?
    private var zeroBlocks = 0
    private var names = Set<String>()
    private(set) var entries = 0

    init(sink: PlainFileSink) { self.sink = sink }

    /// Whether the archive ended properly (end blocks seen, or stopped between members).
    var isComplete: Bool {
        switch state {
        case .ended: true
        case .header: pending.isEmpty && paxPath == nil && paxSize == nil
        default: false
        }
    }

    func feed(_ input: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < input.count {
            let rest = UnsafeRawBufferPointer(rebasing: input[offset...])
            switch state {
            case .header:
                let take = min(Self.block - pending.count, rest.count)
                pending += rest[..<take]
                offset += take
                if pending.count == Self.block {
                    let header = pending
                    pending.removeAll(keepingCapacity: true)
                    try parse(header: header)
                }
            case .pax(let remaining, let global):
                let take = Int(min(remaining, Int64(rest.count)))
                if !global { paxBytes += rest[..<take] }
                offset += take
                let left = remaining - Int64(take)
                if left == 0 {
                    if !global { try parsePAX() }
                    state = .padding(remaining: Self.padding(after: Int64(paxLength)))
                    paxLength = 0
                } else {
                    state = .pax(remaining: left, global: global)
                }
            case .file(let remaining):
                let take = Int(min(remaining, Int64(rest.count)))
                if take > 0 { try sink.write(UnsafeRawBufferPointer(rebasing: rest[..<take])) }
                offset += take
                let left = remaining - Int64(take)
                if left == 0 {
                    try sink.end()
                    state = .padding(remaining: Self.padding(after: fileLength))
                } else {
                    state = .file(remaining: left)
                }
            case .padding(let remaining):
                let take = min(remaining, rest.count)
                offset += take
                state = remaining - take == 0 ? .header : .padding(remaining: remaining - take)
            case .ended:
                guard !rest.contains(where: { $0 != 0 }) else {
                    throw CDOCError(.malformed, "the CDOC2 payload has data after the end of its tar archive")
                }
                offset = input.count
            }
        }
    }

    private var paxLength: Int64 = 0
    private var fileLength: Int64 = 0

    private static func padding(after length: Int64) -> Int { Int((Int64(block) - length % Int64(block)) % Int64(block)) }

    private func parse(header: [UInt8]) throws {
        if !header.contains(where: { $0 != 0 }) {
            zeroBlocks += 1
            if zeroBlocks == 2 { state = .ended }
            return
        }
        guard zeroBlocks == 0 else { throw CDOCError(.malformed, "the CDOC2 payload's tar archive has a member after an empty block") }
        guard Self.checksumMatches(header) else { throw CDOCError(.malformed, "the CDOC2 payload's tar archive has a damaged header") }
        let size = try paxSize ?? Self.number(header[124 ..< 136])
        let type = header[156]
        switch type {
        case UInt8(ascii: "x"), UInt8(ascii: "g"):
            guard size <= Int64(Self.maximumPAXRecord) else { throw CDOCError(.limit, "the CDOC2 payload has an oversized tar extended header") }
            paxLength = size
            state = size == 0 ? .header : .pax(remaining: size, global: type == UInt8(ascii: "g"))
        case UInt8(ascii: "0"), 0, UInt8(ascii: "7"):
            try beginFile(header: header, size: size)
        default:
            let what: String = switch type {
            case UInt8(ascii: "1"), UInt8(ascii: "2"): "a link"
            case UInt8(ascii: "5"): "a folder"
            case UInt8(ascii: "3"), UInt8(ascii: "4"), UInt8(ascii: "6"): "a device or pipe"
            default: "an entry of tar type \(UnicodeScalar(type).escaped(asASCII: true))"
            }
            throw CDOCError(.unsafeName, "the container holds \(what) ('\(SafeFileName.escaped(Self.name(of: header)))'); only plain files are allowed")
        }
    }

    private func beginFile(header: [UInt8], size: Int64) throws {
        entries += 1
        guard entries <= Self.maximumEntries else { throw CDOCError(.limit, "the container holds more than \(Self.maximumEntries) files") }
        var raw = paxPath ?? Array(header[0 ..< 100].prefix { $0 != 0 })
        if paxPath == nil, Self.isUstar(header) {
            let prefix = header[345 ..< 500].prefix { $0 != 0 }
            if !prefix.isEmpty { raw = Array(prefix) + [UInt8(ascii: "/")] + raw }
        }
        paxPath = nil
        paxSize = nil
        let name = try SafeFileName.checked(raw)
        guard names.insert(name).inserted else {
            throw CDOCError(.unsafeName, "the container holds two files named '\(SafeFileName.escaped(name))'")
        }
        try sink.begin(name: name, size: size)
        fileLength = size
        if size == 0 {
            try sink.end()
            state = .header
        } else {
            state = .file(remaining: size)
        }
    }

    private func parsePAX() throws {
        var rest = paxBytes[...]
        paxBytes = []
        while !rest.isEmpty {
            guard let space = rest.firstIndex(of: 0x20),
                  let length = Int(String(decoding: rest[rest.startIndex ..< space], as: UTF8.self)),
                  length > space - rest.startIndex + 1, length <= rest.count,
                  rest[rest.startIndex + length - 1] == 0x0A else {
                throw CDOCError(.malformed, "the CDOC2 payload's tar archive has a damaged extended header")
            }
            let record = rest[(space + 1) ..< (rest.startIndex + length - 1)]
            rest = rest[(rest.startIndex + length)...]
            guard let equals = record.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = String(decoding: record[..<equals], as: UTF8.self)
            let value = record[(equals + 1)...]
            switch key {
            case "path": paxPath = Array(value)
            case "size":
                guard let size = Int64(String(decoding: value, as: UTF8.self)), size >= 0 else {
                    throw CDOCError(.malformed, "the CDOC2 payload's tar archive has a bad size")
                }
                paxSize = size
            default: break
            }
        }
    }

    private static func isUstar(_ header: [UInt8]) -> Bool { Array(header[257 ..< 263]) == Array("ustar\0".utf8) }

    private static func name(of header: [UInt8]) -> String { String(decoding: header[0 ..< 100].prefix { $0 != 0 }, as: UTF8.self) }

    /// An octal field (NUL/space terminated) or GNU base-256 (high bit set).
    static func number(_ field: ArraySlice<UInt8>) throws -> Int64 {
        if let first = field.first, first & 0x80 != 0 {
            var value: Int64 = Int64(first & 0x7F)
            for byte in field.dropFirst() {
                guard value < (1 << 55) else { throw CDOCError(.limit, "a file in the container is too large") }
                value = value << 8 | Int64(byte)
            }
            return value
        }
        var value: Int64 = 0
        var digits = field.drop { $0 == 0x20 }
        digits = digits.prefix { $0 != 0 && $0 != 0x20 }
        for byte in digits {
            guard byte >= 0x30, byte <= 0x37 else { throw CDOCError(.malformed, "the CDOC2 payload's tar archive has a bad number") }
            value = value * 8 + Int64(byte - 0x30)
        }
        return value
    }

    static func checksumMatches(_ header: [UInt8]) -> Bool {
        guard let stored = try? number(header[148 ..< 156]) else { return false }
        var sum: Int64 = 0
        for (index, byte) in header.enumerated() { sum += (148 ..< 156).contains(index) ? 0x20 : Int64(byte) }
        return sum == stored
    }
}

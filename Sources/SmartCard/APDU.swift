/// An ISO 7816-4 command APDU in its short form (Lc ≤ 255, Le ≤ 256): every EstEID command fits,
/// and the cards take no extended lengths or chaining.
public struct CommandAPDU: Sendable, Equatable, CustomStringConvertible {
    public var cla: UInt8
    public var ins: UInt8
    public var p1: UInt8
    public var p2: UInt8
    public var data: [UInt8]
    /// Expected response length, 1...256 (256 is sent as `00`); nil when no data is expected.
    public var le: Int?

    public init(cla: UInt8 = 0x00, ins: UInt8, p1: UInt8, p2: UInt8, data: [UInt8] = [], le: Int? = nil) {
        precondition(data.count <= 255, "short APDUs carry at most 255 bytes")
        precondition(le.map { (1...256).contains($0) } ?? true, "Le is 1...256")
        self.cla = cla
        self.ins = ins
        self.p1 = p1
        self.p2 = p2
        self.data = data
        self.le = le
    }

    /// The bytes sent to the card: header, then Lc and data if any, then Le if any.
    public var bytes: [UInt8] {
        var out = [cla, ins, p1, p2]
        if !data.isEmpty { out += [UInt8(data.count)] + data }
        if let le { out.append(le == 256 ? 0 : UInt8(le)) }
        return out
    }

    /// The header and lengths only: logs never show data (a VERIFY's data is a PIN).
    public var description: String {
        let head = Hex.string([cla, ins, p1, p2], separator: " ")
        return head + (data.isEmpty ? "" : " Lc=\(data.count)") + (le.map { " Le=\($0)" } ?? "")
    }
}

/// A card's answer: the data and the status word.
public struct ResponseAPDU: Sendable, Equatable, CustomStringConvertible {
    public var data: [UInt8]
    public var sw1: UInt8
    public var sw2: UInt8

    public init(data: [UInt8] = [], sw1: UInt8, sw2: UInt8) {
        self.data = data
        self.sw1 = sw1
        self.sw2 = sw2
    }

    public init(sw: UInt16, data: [UInt8] = []) {
        self.init(data: data, sw1: UInt8(sw >> 8), sw2: UInt8(sw & 0xFF))
    }

    /// Splits what the reader returned; fewer than two bytes is no answer at all (a card pulled
    /// mid-command makes vpcd, and some readers, report success with nothing).
    public init(bytes: [UInt8]) throws {
        guard bytes.count >= 2 else { throw CardError.removed }
        data = Array(bytes.dropLast(2))
        sw1 = bytes[bytes.count - 2]
        sw2 = bytes[bytes.count - 1]
    }

    public var sw: UInt16 { UInt16(sw1) << 8 | UInt16(sw2) }
    public var isSuccess: Bool { sw == 0x9000 }
    public var bytes: [UInt8] { data + [sw1, sw2] }

    public var description: String { Hex.string([sw1, sw2], separator: " ") + (data.isEmpty ? "" : " (\(data.count) bytes)") }
}

/// Upper-case hex, the way APDUs and ATRs are written in the specifications.
public enum Hex {
    public static func string(_ bytes: [UInt8], separator: String = "") -> String {
        let digits = Array("0123456789ABCDEF")
        return bytes.map { String([digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]]) }.joined(separator: separator)
    }

    /// Parses hex digits, ignoring spaces; nil for anything else.
    public static func bytes(_ text: String) -> [UInt8]? {
        let digits = text.filter { !$0.isWhitespace }
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            out.append(byte)
            index = next
        }
        return out
    }
}

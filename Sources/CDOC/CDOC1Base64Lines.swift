import Crypto
import Glibc

/// Base64 in lines of 64 characters joined by LF, with no LF after the last line: what
/// Foundation's `base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])`
/// gives for the whole input (and what libcdoc writes), made as the bytes arrive in pieces cut
/// anywhere. Each line is 48 input bytes, so a line is only ever encoded whole or at `finish`.
/// The text goes to `output` in pieces of at most 64 KiB. It may encode plaintext (a DDOC's
/// files), so its buffers are wiped when done.
final class CDOC1Base64Lines {
    private static let digits = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let lineBytes = 48
    private static let outCapacity = 64 << 10

    private let output: (UnsafeRawBufferPointer) throws -> Void
    /// Input bytes of a line not yet whole.
    private var held = [UInt8](repeating: 0, count: lineBytes)
    private var heldCount = 0
    private var out = [UInt8](repeating: 0, count: outCapacity)
    private var outCount = 0
    private var anyLine = false

    init(output: @escaping (UnsafeRawBufferPointer) throws -> Void) { self.output = output }

    deinit {
        SecretBytes.zero(&held)
        SecretBytes.zero(&out)
    }

    /// The whole of `bytes` as one text (tests and small values).
    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var text: [UInt8] = []
        let lines = CDOC1Base64Lines { text += $0 }
        // Appending to an array cannot fail.
        try! bytes.withUnsafeBytes { try lines.add($0) }
        try! lines.finish()
        return text
    }

    func add(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try add($0) } }

    func add(_ input: UnsafeRawBufferPointer) throws {
        guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var offset = 0
        if heldCount > 0 {
            let taken = min(Self.lineBytes - heldCount, input.count)
            held.withUnsafeMutableBufferPointer { ($0.baseAddress! + heldCount).update(from: base, count: taken) }
            heldCount += taken
            offset = taken
            guard heldCount == Self.lineBytes else { return }
            try held.withUnsafeBufferPointer { try line($0.baseAddress!, count: Self.lineBytes) }
            heldCount = 0
        }
        while input.count - offset >= Self.lineBytes {
            try line(base + offset, count: Self.lineBytes)
            offset += Self.lineBytes
        }
        let rest = input.count - offset
        held.withUnsafeMutableBufferPointer { $0.baseAddress!.update(from: base + offset, count: rest) }
        heldCount = rest
    }

    /// Encodes the last, shorter line (padded with '=') and hands on everything left.
    func finish() throws {
        if heldCount > 0 {
            try held.withUnsafeBufferPointer { try line($0.baseAddress!, count: heldCount) }
            heldCount = 0
        }
        try flush()
    }

    /// One line of `count` (≤ 48) bytes, after the LF that ends the one before.
    private func line(_ bytes: UnsafePointer<UInt8>, count: Int) throws {
        if outCount + 65 > Self.outCapacity { try flush() }
        Self.digits.withUnsafeBufferPointer { digits in
            out.withUnsafeMutableBufferPointer { buffer in
                let text = buffer.baseAddress!
                var at = outCount
                if anyLine {
                    text[at] = 0x0A
                    at += 1
                }
                var index = 0
                while index + 3 <= count {
                    let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                    text[at] = digits[Int(value >> 18)]
                    text[at + 1] = digits[Int(value >> 12 & 0x3F)]
                    text[at + 2] = digits[Int(value >> 6 & 0x3F)]
                    text[at + 3] = digits[Int(value & 0x3F)]
                    at += 4
                    index += 3
                }
                if index < count {
                    let second = index + 1 < count ? UInt32(bytes[index + 1]) : 0
                    let value = UInt32(bytes[index]) << 16 | second << 8
                    text[at] = digits[Int(value >> 18)]
                    text[at + 1] = digits[Int(value >> 12 & 0x3F)]
                    text[at + 2] = index + 1 < count ? digits[Int(value >> 6 & 0x3F)] : UInt8(ascii: "=")
                    text[at + 3] = UInt8(ascii: "=")
                    at += 4
                }
                outCount = at
            }
        }
        anyLine = true
    }

    private func flush() throws {
        guard outCount > 0 else { return }
        let ready = outCount
        outCount = 0
        try out.withUnsafeBytes { try output(UnsafeRawBufferPointer(rebasing: $0[..<ready])) }
    }
}

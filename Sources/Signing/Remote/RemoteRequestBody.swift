import Crypto

/// A CSC request body as JSON bytes in wiped memory: a PIN or SAD among the members goes
/// straight from its `SecretBytes` into the body, never through a `String` (which cannot be
/// wiped). The bytes are sized first, so the buffer is never grown (growing leaves copies).
enum RemoteRequestBody {
    enum Value {
        case text(String)
        case number(Int)
        case flag(Bool)
        case texts([String])
        case secret(SecretBytes)
    }

    static func encode(_ members: [(String, Value)]) -> SecretBytes {
        var size = 2
        walk(members) { size += $0.count }
        var buffer = [UInt8](repeating: 0, count: size)
        var used = 0
        buffer[used] = UInt8(ascii: "{")
        used += 1
        walk(members) { part in
            for byte in part {
                buffer[used] = byte
                used += 1
            }
        }
        buffer[used] = UInt8(ascii: "}")
        return SecretBytes(buffer)
    }

    /// Calls `emit` with the pieces of the members' JSON, in order (twice: to size, to write).
    private static func walk(_ members: [(String, Value)], _ emit: (UnsafeRawBufferPointer) -> Void) {
        for (index, (name, value)) in members.enumerated() {
            if index > 0 { ascii(",", emit) }
            string(Array(name.utf8), emit)
            ascii(":", emit)
            switch value {
            case .text(let text): string(Array(text.utf8), emit)
            case .number(let number): Array(String(number).utf8).withUnsafeBytes(emit)
            case .flag(let flag): Array((flag ? "true" : "false").utf8).withUnsafeBytes(emit)
            case .texts(let texts):
                ascii("[", emit)
                for (position, text) in texts.enumerated() {
                    if position > 0 { ascii(",", emit) }
                    string(Array(text.utf8), emit)
                }
                ascii("]", emit)
            case .secret(let secret):
                secret.withBytes { bytes in string(bytes, emit) }
            }
        }
    }

    /// A JSON string: `"` and `\` escaped, control characters as \u00XX, other bytes as they are
    /// (UTF-8 passes through). Byte by byte, so a secret is never copied whole.
    private static func string<Bytes: Collection>(_ bytes: Bytes, _ emit: (UnsafeRawBufferPointer) -> Void) where Bytes.Element == UInt8 {
        ascii("\"", emit)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                withUnsafeBytes(of: (UInt8(ascii: "\\"), byte)) { emit($0) }
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                withUnsafeBytes(of: (UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                     hex[Int(byte >> 4)], hex[Int(byte & 0xF)])) { emit($0) }
            default:
                withUnsafeBytes(of: byte) { emit($0) }
            }
        }
        ascii("\"", emit)
    }

    private static func ascii(_ text: String, _ emit: (UnsafeRawBufferPointer) -> Void) {
        Array(text.utf8).withUnsafeBytes(emit)
    }
}

/// Data-file reference URIs (asice-xades.md §3.3): percent-encode every byte of the UTF-8 name
/// except ASCII letters, digits and `-._~/`; decode `%XX` (either case), keeping broken escapes as text.
public enum ReferenceURI {
    public static func encode(_ name: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The container name a reference URI points to: %XX-decoded, without a leading '/'.
    public static func name(of uri: String) -> String {
        decode(uri.hasPrefix("/") ? String(uri.dropFirst()) : uri)
    }

    public static func decode(_ uri: String) -> String {
        let bytes = Array(uri.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count,
               let high = hexDigitValue(bytes[i + 1]), let low = hexDigitValue(bytes[i + 2]) {
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The value of one ASCII hex digit (either case), for %XX and \XX escapes.
func hexDigitValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

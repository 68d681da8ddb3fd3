import Foundation

/// An XML document as UTF-8, found the way an XML processor finds its encoding (XML 1.0
/// appendix F: a byte order mark or the bytes of `<?xml`, then the encoding declaration). The
/// check for a DOCTYPE runs on this text, so an encoding cannot hide one from it (in UTF-16 the
/// bytes of "<!" are not adjacent, and UTF-7 can write them as "+ADwAIQ-").
enum XMLEncoding {
    struct Text {
        let bytes: [UInt8]
        /// True when `bytes` are not the document's own (converted, or a byte order mark dropped):
        /// the parser must then read them as UTF-8 and ignore the declaration.
        let converted: Bool
    }

    static func utf8(_ bytes: [UInt8]) throws -> Text {
        func starts(_ prefix: [UInt8]) -> Bool { bytes.starts(with: prefix) }
        if starts([0x00, 0x00, 0xFE, 0xFF]) { return try decode(bytes.dropFirst(4), as: UTF32.self, bigEndian: true) }
        if starts([0xFF, 0xFE, 0x00, 0x00]) { return try decode(bytes.dropFirst(4), as: UTF32.self, bigEndian: false) }
        if starts([0x00, 0x00, 0x00, 0x3C]) { return try decode(bytes[...], as: UTF32.self, bigEndian: true) }
        if starts([0x3C, 0x00, 0x00, 0x00]) { return try decode(bytes[...], as: UTF32.self, bigEndian: false) }
        if starts([0xFE, 0xFF]) { return try decode(bytes.dropFirst(2), as: UTF16.self, bigEndian: true) }
        if starts([0xFF, 0xFE]) { return try decode(bytes.dropFirst(2), as: UTF16.self, bigEndian: false) }
        if starts([0x00, 0x3C, 0x00, 0x3F]) { return try decode(bytes[...], as: UTF16.self, bigEndian: true) }
        if starts([0x3C, 0x00, 0x3F, 0x00]) { return try decode(bytes[...], as: UTF16.self, bigEndian: false) }
        if starts([0xEF, 0xBB, 0xBF]) {
            guard String(validating: bytes.dropFirst(3), as: UTF8.self) != nil else { throw XMLError("it is not valid UTF-8") }
            return Text(bytes: Array(bytes.dropFirst(3)), converted: true)
        }
        if starts([0x4C, 0x6F, 0xA7, 0x94]) {
            // EBCDIC: the declaration's characters are the same in every EBCDIC code page.
            let end = bytes.firstIndex(of: 0x6E).map { $0 + 1 } ?? bytes.endIndex   // '>'
            guard let declaration = try? convert(Array(bytes[..<end]), from: "IBM037"),
                  let declared = declaredEncoding(declaration) else {
                throw XMLError("it is EBCDIC encoded and its XML declaration names no encoding")
            }
            return Text(bytes: try convert(bytes, from: declared), converted: true)
        }
        // ASCII-based: the declaration, if any, names the encoding.
        guard let declared = declaredEncoding(bytes), !isUTF8(declared), !isWide(declared) else {
            // (A declared UTF-16 or UTF-32 over ASCII bytes is the parser's to refuse.)
            return Text(bytes: bytes, converted: false)
        }
        return Text(bytes: try convert(bytes, from: declared), converted: true)
    }

    /// True when a document starting with `head` is not UTF-8 (or ASCII) as it stands, so `utf8`
    /// would convert it; a UTF-8 byte order mark libxml2 reads itself.
    static func needsConversion(head: [UInt8]) -> Bool {
        let signatures: [[UInt8]] = [[0x00, 0x00, 0xFE, 0xFF], [0xFF, 0xFE, 0x00, 0x00], [0x00, 0x00, 0x00, 0x3C], [0x3C, 0x00, 0x00, 0x00],
                                     [0xFE, 0xFF], [0xFF, 0xFE], [0x00, 0x3C, 0x00, 0x3F], [0x3C, 0x00, 0x3F, 0x00], [0x4C, 0x6F, 0xA7, 0x94]]
        if signatures.contains(where: { head.starts(with: $0) }) { return true }
        let text = head.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(head.dropFirst(3)) : head
        guard let declared = declaredEncoding(text) else { return false }
        return !isUTF8(declared)
    }

    /// The value of `encoding="…"` in a leading `<?xml …?>` declaration.
    static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        // "<?xml" and a space: "<?xml-stylesheet" is another processing instruction.
        guard bytes.starts(with: Array("<?xml".utf8)), bytes.count > 5, [0x20, 0x09, 0x0D, 0x0A].contains(bytes[5]) else {
            return nil
        }
        let end = bytes.indices.dropFirst(5).first { bytes[$0] == UInt8(ascii: ">") } ?? bytes.endIndex
        let declaration = String(decoding: bytes[..<end], as: UTF8.self)
        guard let key = declaration.range(of: "encoding") else { return nil }
        var rest = declaration[key.upperBound...].drop { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard rest.first == "=" else { return nil }
        rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        let value = rest.dropFirst().prefix { $0 != quote }
        return value.isEmpty ? nil : String(value)
    }

    static func isUTF8(_ name: String) -> Bool {
        ["UTF-8", "UTF8", "US-ASCII", "ASCII"].contains(name.uppercased())
    }

    private static func isWide(_ name: String) -> Bool {
        let upper = name.uppercased()
        return ["UTF-16", "UTF16", "UCS-2", "UCS2", "UTF-32", "UTF32", "UCS-4", "UCS4"].contains { upper.hasPrefix($0) }
    }

    private static func decode<Encoding: Unicode.Encoding>(_ bytes: ArraySlice<UInt8>, as encoding: Encoding.Type,
                                                           bigEndian: Bool) throws -> Text
        where Encoding.CodeUnit: FixedWidthInteger {
        let width = MemoryLayout<Encoding.CodeUnit>.size
        let name = width == 2 ? "UTF-16" : "UTF-32"
        guard bytes.count % width == 0 else { throw XMLError("it is not valid \(name) (\(bytes.count) bytes)") }
        var units: [Encoding.CodeUnit] = []
        units.reserveCapacity(bytes.count / width)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            var unit: Encoding.CodeUnit = 0
            for offset in 0..<width {
                let shift = bigEndian ? (width - 1 - offset) * 8 : offset * 8
                unit |= Encoding.CodeUnit(bytes[index + offset]) << shift
            }
            units.append(unit)
            index += width
        }
        guard var text = String(validating: units, as: encoding) else { throw XMLError("it is not valid \(name)") }
        if text.unicodeScalars.first == "\u{FEFF}" { text.unicodeScalars.removeFirst() }
        return Text(bytes: Array(text.utf8), converted: true)
    }

    /// Converts with iconv, which has every encoding libxml2 itself would use it for.
    private static func convert(_ bytes: [UInt8], from encoding: String) throws -> [UInt8] {
        let converter = iconv_open("UTF-8", encoding)
        guard let converter, converter != iconv_t(bitPattern: -1) else {
            throw XMLError("it declares the encoding '\(encoding)', which asicfs cannot read")
        }
        defer { iconv_close(converter) }
        var input = bytes
        // Four bytes of UTF-8 per input byte is more than any encoding needs.
        var output = [UInt8](repeating: 0, count: bytes.count * 4 + 16)
        let written: Int? = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(inBuffer.baseAddress)?
                    .assumingMemoryBound(to: CChar.self)
                var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(outBuffer.baseAddress)?
                    .assumingMemoryBound(to: CChar.self)
                var inLeft = inBuffer.count, outLeft = outBuffer.count
                guard iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft) != -1, inLeft == 0,
                      iconv(converter, nil, nil, &outPointer, &outLeft) != -1 else { return nil }
                return outBuffer.count - outLeft
            }
        }
        guard let written else { throw XMLError("it is not valid \(encoding), the encoding it declares") }
        return Array(output[..<written])
    }
}

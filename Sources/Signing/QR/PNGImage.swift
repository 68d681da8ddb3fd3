import CZlib

/// A QR code as a grey-scale PNG (8 bits, no alpha): dark modules black, the rest white, with
/// the quiet zone. Compressed with zlib; each chunk carries its CRC-32 (zlib's crc32).
public enum PNGImage {
    public static func qrCode(_ code: QRCode, pixelsPerModule scale: Int = 8) -> [UInt8] {
        let modules = code.size + 2 * QRCode.quietZone
        let width = modules * scale
        var raw: [UInt8] = []
        raw.reserveCapacity((width + 1) * width)
        for row in 0..<width {
            raw.append(0)  // filter type None
            let y = row / scale - QRCode.quietZone
            for column in 0..<width {
                raw.append(code.isDark(column / scale - QRCode.quietZone, y) ? 0 : 255)
            }
        }
        var header = bigEndian(UInt32(width)) + bigEndian(UInt32(width))
        header += [8, 0, 0, 0, 0]  // bit depth 8, grey, deflate, adaptive filters, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", header) + chunk("IDAT", deflate(raw)) + chunk("IEND", [])
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        let crc = typed.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, UInt32($0.count))) }
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc)
    }

    /// The zlib stream (header, deflate, Adler-32) PNG's IDAT holds.
    static func deflate(_ data: [UInt8]) -> [UInt8] {
        var length = compressBound(uLong(data.count))
        var out = [UInt8](repeating: 0, count: Int(length))
        let status = compress2(&out, &length, data, uLong(data.count), 9)
        precondition(status == Z_OK, "zlib compress2 failed (\(status)) on an in-memory buffer")
        return Array(out[..<Int(length)])
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }
}

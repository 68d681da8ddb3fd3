import CQRencode

/// A QR code's modules (true = dark), made by libqrencode from text: byte mode, error
/// correction M (Smart-ID's device-link guidance allows L or M; H does not fit).
public struct QRCode: Sendable, Equatable {
    public let size: Int
    public let modules: [Bool]

    public init(_ text: String) throws {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else {
            throw SigningError("could not make a QR code of \(text.utf8.count) bytes")
        }
        defer { QRcode_free(code) }
        size = Int(code.pointee.width)
        // Bit 0 of each byte is the module's colour; the other bits are libqrencode's bookkeeping.
        modules = (0..<(size * size)).map { code.pointee.data[$0] & 1 == 1 }
    }

    public func isDark(_ x: Int, _ y: Int) -> Bool {
        x >= 0 && y >= 0 && x < size && y < size && modules[y * size + x]
    }

    /// The quiet zone the QR standard asks for, in modules.
    public static let quietZone = 4
}

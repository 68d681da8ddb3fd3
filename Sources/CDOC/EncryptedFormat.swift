/// The encrypted DigiDoc formats, told apart by content, never by extension (upstream CDOC2 test
/// files are named `*.cdoc`).
public enum EncryptedFormat: String, Sendable, Codable, CaseIterable {
    case cdoc10 = "CDOC 1.0"
    case cdoc11 = "CDOC 1.1"
    case cdoc2 = "CDOC2"

    /// The format family the first bytes announce: CDOC2's magic `CDOC` 02, or XML (CDOC 1.x; which
    /// version only its `DocumentFormat` property says). nil for anything else.
    public enum Family: Sendable { case xml, cdoc2 }

    public static func family(ofPrefix prefix: [UInt8]) -> Family? {
        if prefix.starts(with: [0x43, 0x44, 0x4F, 0x43, 0x02]) { return .cdoc2 }
        var bytes = prefix[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        while let first = bytes.first, [0x20, 0x09, 0x0A, 0x0D].contains(first) { bytes = bytes.dropFirst() }
        return bytes.starts(with: Array("<?xml".utf8)) || bytes.starts(with: Array("<".utf8)) ? .xml : nil
    }
}

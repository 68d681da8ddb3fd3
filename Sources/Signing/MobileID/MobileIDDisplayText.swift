/// The text a Mobile-ID phone shows before the PIN prompt (`message=`), and the SIM encoding that
/// fits it. The SIM holds 100 bytes: 100 characters of the GSM 03.38 default alphabet (at most 5
/// of them from its extension table, which take two septets), or 50 UCS-2 characters.
public struct MobileIDDisplayText: Sendable, Equatable {
    public enum Format: String, Sendable { case gsm7 = "GSM-7", ucs2 = "UCS-2" }

    public let text: String
    public let format: Format

    public static let gsm7Limit = 100
    public static let gsm7ExtensionLimit = 5
    public static let ucs2Limit = 50

    /// GSM-7 when every character is in its alphabet and the text fits, else UCS-2 when that fits;
    /// otherwise says which limit the text breaks.
    public init(_ text: String) throws(SigningParameterError) {
        self.text = text
        let scalars = Array(text.unicodeScalars)
        let outside = scalars.first { !Self.basic.contains($0) && !Self.extension.contains($0) }
        let extensionCount = scalars.filter { Self.extension.contains($0) }.count
        if outside == nil, scalars.count <= Self.gsm7Limit, extensionCount <= Self.gsm7ExtensionLimit {
            format = .gsm7
            return
        }
        if let wide = scalars.first(where: { $0.value > 0xFFFF }) {
            throw SigningParameterError("mobile-id: message: '\(Character(wide))' cannot be shown on a SIM "
                + "(UCS-2 holds only characters of the Basic Multilingual Plane)")
        }
        let units = text.utf16.count
        if units <= Self.ucs2Limit {
            format = .ucs2
            return
        }
        if let outside {
            throw SigningParameterError("mobile-id: message: at most \(Self.ucs2Limit) characters when it needs UCS-2 "
                + "(it holds '\(Character(outside))', which GSM-7 lacks); this one has \(units)")
        }
        if scalars.count > Self.gsm7Limit {
            throw SigningParameterError("mobile-id: message: at most \(Self.gsm7Limit) characters (GSM-7); this one has \(scalars.count)")
        }
        throw SigningParameterError("mobile-id: message: at most \(Self.gsm7ExtensionLimit) of the characters € [ ] ^ | { } \\ ~ "
            + "fit a GSM-7 message (this one has \(extensionCount)), or at most \(Self.ucs2Limit) characters in all as UCS-2")
    }

    /// The GSM 03.38 default alphabet (its escape code excluded).
    static let basic: Set<Unicode.Scalar> = Set(
        ("@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡"
            + "ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà").unicodeScalars)
    /// The extension table: each of these takes two septets.
    static let `extension`: Set<Unicode.Scalar> = Set("\u{0C}^{}\\[~]|€".unicodeScalars)
}

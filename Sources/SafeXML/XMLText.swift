/// Text put into XML this project writes (XAdES signatures, CDOC 1.x documents).
public enum XMLText {
    /// `text` as the content of an element or an attribute value that a parser reads back as
    /// `text`: the markup characters and the line ends a parser would normalize (`\r`, and in an
    /// attribute also `\n` and `\t`, which become spaces there) as references. The other control
    /// characters cannot be in XML 1.0 at all, not even as references: they are left out.
    /// (Attribute values this project writes are always in double quotes, so `'` stays as it is.)
    public static func escaped(_ text: String, inAttribute: Bool = false) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\r": out += "&#13;"
            case "\n" where inAttribute: out += "&#10;"
            case "\t" where inAttribute: out += "&#9;"
            case "\n", "\t": out.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: continue
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// A QR code as terminal text: two module rows per line with UTF-8 half blocks. Light modules
/// (and a two-module quiet zone) are the drawn ones and dark ones are left blank, as `qrencode
/// -t UTF8` does: the code then reads on the usual dark terminal background.
public enum QRTerminalText {
    public static func lines(_ code: QRCode) -> [String] {
        let margin = 2
        let range = -margin..<(code.size + margin)
        var lines: [String] = []
        var y = -margin
        while y < code.size + margin {
            var line = ""
            for x in range {
                let top = !code.isDark(x, y), bottom = y + 1 < code.size + margin && !code.isDark(x, y + 1)
                line += top ? (bottom ? "█" : "▀") : (bottom ? "▄" : " ")
            }
            lines.append(line)
            y += 2
        }
        return lines
    }
}

/// A QR code as terminal text: two module rows per line with UTF-8 half blocks, dark modules
/// drawn as the terminal's background colour is not assumed: light modules are the drawn ones,
/// so the code reads on a dark terminal, and the quiet zone is drawn around it.
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

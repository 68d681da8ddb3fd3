import ASiC
import Foundation
import Signing

/// Shows a Smart-ID v3 device link for `sign --method smart-id qr=yes`: on a terminal the QR code
/// (UTF-8 half blocks) redrawn in place each second with the elapsed time; otherwise one line
/// per link (a stale QR code printed to a file would be useless); with --json an event line.
final class SmartIDQRDisplay {
    private let json: Bool
    private let terminal = isatty(STDOUT_FILENO) == 1
    private var drawnLines = 0

    init(json: Bool) { self.json = json }

    func show(_ link: String, elapsedSeconds: Int) {
        if json {
            CommandJSON.event("sign", "device_link", ["device_link": .text(link), "elapsed_seconds": .number(elapsedSeconds)])
            return
        }
        guard terminal, let code = try? QRCode(link) else {
            Terminal.out("Smart-ID QR code link (\(elapsedSeconds) s): \(PrintableText.escaped(link))")
            return
        }
        let lines = QRTerminalText.lines(code) + ["Scan the QR code with the Smart-ID app (\(elapsedSeconds) s)"]
        // Cursor up over the previous drawing, then redraw each line from its start. Written
        // directly: Terminal.out escapes control characters, and all of this text is asicfs's own.
        let up = drawnLines > 0 ? "\u{1B}[\(drawnLines)A" : ""
        let text = up + lines.map { "\r" + $0 + "\u{1B}[K" }.joined(separator: "\n") + "\n"
        FileHandle.standardOutput.write(Data(text.utf8))
        drawnLines = lines.count
    }
}

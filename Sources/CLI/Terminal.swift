import ASiC
import Crypto
import Foundation

/// Writing to the terminal: errors, plain output, and a progress line for long work.
/// Nothing from a container reaches the terminal raw (see `PrintableText`): an error is escaped
/// whole, so it is always one line; other output keeps its lines, and whoever lays it out
/// (a listing, a report) escapes each field first so that a name cannot add a line.
enum Terminal {
    static func out(_ text: String) {
        FileHandle.standardOutput.write(Data((PrintableText.escapedKeepingLines(text) + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(("asicfs: " + PrintableText.escaped(text) + "\n").utf8))
    }

    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
}

/// A one-line progress display on stderr. It appears only on a terminal, only once work has
/// taken more than half a second, and redraws at most ten times a second.
final class ProgressLine: @unchecked Sendable {
    private let label: String
    private let enabled: Bool
    private let start = Date()
    private var lastDraw = Date.distantPast
    private var drawn = false

    init(_ label: String, quiet: Bool) {
        self.label = PrintableText.escaped(label)
        enabled = !quiet && Terminal.stderrIsTerminal
    }

    func update(done: Int64, total: Int64) {
        guard enabled else { return }
        let now = Date()
        guard now.timeIntervalSince(start) > 0.5, now.timeIntervalSince(lastDraw) > 0.1 else { return }
        lastDraw = now
        let elapsed = now.timeIntervalSince(start)
        let rate = Double(done) / max(elapsed, 0.001)
        var line = "\r\(label)  \(Format.bytes(done))"
        if total > 0 { line += " / \(Format.bytes(total))  \(Int(Double(done) * 100 / Double(total)))%" }
        line += "  \(Format.bytes(Int64(rate)))/s"
        FileHandle.standardError.write(Data((line + "\u{1B}[K").utf8))
        drawn = true
    }

    /// Shows what is happening now (a step of a signing), replacing the line.
    func message(_ text: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data(("\r\(label): \(PrintableText.escaped(text))\u{1B}[K").utf8))
        drawn = true
    }

    func finish() {
        guard drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        drawn = false
    }
}

enum Format {
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 { value /= 1024; unit += 1 }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// ISO 8601 in UTC, to the second (the `--json` format).
    static func isoDate(_ date: Date) -> String { ISOTime.string(date) }

    /// Local time, to the minute (the `ls` table).
    static func localDate(_ date: Date) -> String {
        var t = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&t, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min))"
    }
}

/// `Format.localDate` for many files at once: the files of a container mostly share a few times.
final class LocalDates {
    private var cache: [Int64: String] = [:]

    func string(_ date: Date) -> String {
        let second = Int64(date.timeIntervalSince1970.rounded(.down))
        if let known = cache[second] { return known }
        let text = Format.localDate(date)
        cache[second] = text
        return text
    }
}

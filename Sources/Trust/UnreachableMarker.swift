import Foundation

/// Remembers, in the cache folder, that a trusted list could not be downloaded: for a few
/// minutes the next loads fail at once with the same reason instead of waiting for the network
/// again (each `asicfs verify` offline waited the full timeout). A small file beside the list's
/// cached copy, `<name>.unreachable`, holding the time (Unix seconds) and the reason.
struct UnreachableMarker {
    /// How long a failed download is not tried again.
    static let retryDelay: TimeInterval = 300

    let path: String

    init(cachedCopy: String) { path = cachedCopy + ".unreachable" }

    /// The remembered failure, while it is recent: when it happened and why.
    func recent(at now: Date) -> (time: Date, reason: String)? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n", maxSplits: 1).map(String.init)
        guard lines.count == 2, let seconds = Double(lines[0]) else { return nil }
        let time = Date(timeIntervalSince1970: seconds)
        // A time in the future (a clock set back) is not trusted to hold the download off.
        guard time <= now, now.timeIntervalSince(time) < Self.retryDelay else { return nil }
        return (time, lines[1].trimmingCharacters(in: .newlines))
    }

    /// A failed write only costs a wait next time.
    func record(_ reason: String, at now: Date, cacheDir: String) {
        try? FileManager.default.createDirectory(atPath: cacheDir, withIntermediateDirectories: true)
        let line = reason.replacingOccurrences(of: "\n", with: " ")
        try? Data("\(now.timeIntervalSince1970)\n\(line)\n".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    func clear() { try? FileManager.default.removeItem(atPath: path) }
}

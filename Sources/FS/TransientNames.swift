import Configuration
import Foundation

/// Names of the temporaries editors and desktops make beside the files they open
/// (`report.csv~`, `.report.csv.swp`, `.~lock.report.csv#`, `.goutputstream-XXXX`, `.DS_Store`,
/// …): a new file made through the mount under such a name lives only in the mount's view and
/// is never saved, so whatever is signed next holds only what the person put there. The name
/// alone never drops data: an entry the container already has, or a data file renamed to such a
/// name (vim's `mv report.csv report.csv~`), is saved like any other; a temporary renamed to a
/// normal name (an editor saving through it) becomes a data file. The patterns are
/// shell globs matched against the last part of a name; the `transient-names` setting replaces
/// the list (`none`: no name is transient).
struct TransientNames: Sendable {
    static let defaults = ["*~", ".#*", "#*#", ".~lock.*#", "*.swp", "*.swx", ".goutputstream-*", ".nfs*",
                           ".DS_Store", "Thumbs.db", "desktop.ini", "._*"]
    /// The patterns as C strings, made once: `matches` runs for every name at every save.
    private let patterns: [[CChar]]

    init(configuration: Configuration) {
        let words: [String]
        if let value = configuration["transient-names"] {
            words = value == "none" ? [] : value.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        } else {
            words = Self.defaults
        }
        patterns = words.map { Array($0.utf8CString) }
    }

    /// True when the last part of `name` (a data file's path in the container) matches.
    func matches(_ name: String) -> Bool {
        guard !patterns.isEmpty else { return false }
        let last = name.lastIndex(of: "/").map { String(name[name.index(after: $0)...]) } ?? name
        // No FNM_PERIOD: "*.swp" must match vim's ".report.csv.swp".
        return last.withCString { cName in patterns.contains { fnmatch($0, cName, 0) == 0 } }
    }

    /// The folders desktops make for their trash (freedesktop.org trash spec, per mount).
    static func isTrashFolder(_ name: String) -> Bool {
        let last = name.split(separator: "/").last.map(String.init) ?? name
        return last == ".Trash" || last.hasPrefix(".Trash-")
    }
}

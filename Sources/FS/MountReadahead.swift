import Foundation

/// The kernel reads ahead on a FUSE mount at most its backing device's `read_ahead_kb`, 128 KiB
/// by default, whatever max_readahead the mount asks for: a sequential reader then arrives as
/// 128 KiB requests, eight times the round trips of 1 MiB ones. Root may raise it in sysfs for
/// this mount's own device (nothing else shares it), which is what this does once the mount
/// has answered INIT; for anyone else the write fails and the default stays.
enum MountReadahead {
    static let kibibytes = Int(FuseLimits.largestRequest) >> 10

    /// Raises the readahead of the mount at `mountpoint` (found by its device in
    /// /proc/self/mountinfo, so that nothing is asked of the mount itself).
    static func raise(at mountpoint: String) {
        guard let device = device(of: mountpoint) else { return }
        let setting = "/sys/class/bdi/\(device)/read_ahead_kb"
        guard let current = try? String(contentsOfFile: setting, encoding: .utf8),
              let value = Int(current.trimmingCharacters(in: .whitespacesAndNewlines)), value < kibibytes else { return }
        let fd = open(setting, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let text = "\(kibibytes)\n"
        _ = text.withCString { write(fd, $0, strlen($0)) }
    }

    /// "major:minor" of the mount at `mountpoint` (mountinfo escapes spaces in paths as \040).
    static func device(of mountpoint: String) -> String? {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        let escaped = mountpoint.replacingOccurrences(of: "\\", with: "\\134").replacingOccurrences(of: " ", with: "\\040")
            .replacingOccurrences(of: "\t", with: "\\011").replacingOccurrences(of: "\n", with: "\\012")
        for line in table.split(separator: "\n").reversed() {
            let fields = line.split(separator: " ")
            if fields.count > 4, fields[4] == escaped { return String(fields[2]) }
        }
        return nil
    }
}

import Foundation
import TestTools

// Clean-up for tests that may leave a FUSE mount behind (see MountFixture for the usual one).

/// Lazily unmounts whatever is still mounted at or below `folder` (a test whose refusal did not
/// happen on the old code leaves a mount behind).
func unmountEverything(below folder: String) {
    guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return }
    let points = table.split(separator: "\n").compactMap { line -> String? in
        let fields = line.split(separator: " ")
        guard fields.count > 4 else { return nil }
        let point = String(fields[4])
        return point == folder || point.hasPrefix(folder + "/") ? point : nil
    }
    for point in points.reversed() {
        _ = try? Shell.run("/bin/umount", ["-l", point])
    }
}

/// Ends a FUSE mount whose daemon is wedged on its own mount (its requests never get an answer):
/// aborts the kernel's connection (fusectl), which fails every waiting request, then detaches the
/// mount. Killing the daemon alone leaves its threads stuck in the kernel.
func abortFuseMounts(below folder: String) {
    guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return }
    var st = stat()
    if stat("/sys/fs/fuse/connections/", &st) != 0 || (try? FileManager.default.contentsOfDirectory(atPath: "/sys/fs/fuse/connections"))?.isEmpty ?? true {
        _ = try? Shell.run("/bin/mount", ["-t", "fusectl", "fusectl", "/sys/fs/fuse/connections"])
    }
    for line in table.split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard fields.count > 4, String(fields[4]) == folder || String(fields[4]).hasPrefix(folder + "/"),
              line.contains(" - fuse"), let minor = fields[2].split(separator: ":").last else { continue }
        let abort = open("/sys/fs/fuse/connections/\(minor)/abort", O_WRONLY)
        if abort >= 0 {
            _ = write(abort, "1", 1)
            close(abort)
        }
    }
    unmountEverything(below: folder)
}

import Foundation
import Glibc

/// A desktop session for the length of one test: DISPLAY set and a notify-send first on PATH
/// that appends what it was asked to show to `notified`. `restore()` puts PATH and DISPLAY back.
struct RecordingNotifySend {
    let notified: String
    private let savedPath: String

    init(in folder: String) throws {
        let bin = folder + "/bin-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        notified = bin + "/notified"
        try writeFile(Array("#!/bin/sh\nprintf '%s\\n' \"$@\" >> '\(notified)'\n".utf8), bin + "/notify-send")
        chmod(bin + "/notify-send", 0o755)
        savedPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        setenv("PATH", bin + ":" + savedPath, 1)
        setenv("DISPLAY", ":99", 1)
    }

    func restore() {
        setenv("PATH", savedPath, 1)
        unsetenv("DISPLAY")
    }
}

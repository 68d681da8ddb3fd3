import ASiC
import Configuration
import Foundation
import Signing

/// One `asicfs open`. The desktop file runs it without a terminal, so a failure is also a
/// desktop notification, and it takes away the folder it made: a failed open leaves nothing.
final class OpenAttempt {
    private let given: String
    private let configuration: Configuration
    /// The mount folder this open made, while the mount is not there yet.
    var madeFolder: String?
    /// What the mount child said last on stderr: the reason it failed.
    private var childReason: String?

    init(given: String, configuration: Configuration) {
        self.given = given
        self.configuration = configuration
    }

    /// Runs the open; on a failure takes away the folder it made. A non-zero status (the mount
    /// child failed and said why on stderr) is notified here; an error is thrown on, and the
    /// command's failure line notified (`notify`, for every failure of open).
    func reportingFailure(_ body: () throws -> Int32) throws -> Int32 {
        do {
            let status = try body()
            if status != 0 {
                removeMadeFolder()
                Self.notify(given: given, reason: childReason ?? "asicfs mount ended with status \(status)",
                            configuration: configuration)
            }
            return status
        } catch {
            removeMadeFolder()
            throw error
        }
    }

    private func removeMadeFolder() {
        if let madeFolder { rmdir(madeFolder) }
        madeFolder = nil
    }

    /// "asicfs: cannot open NAME" with the reason, as a desktop notification.
    static func notify(given: String, reason: String, configuration: Configuration) {
        let name = PrintableText.escaped(PathText.lastComponent(of: given))
        DesktopNotification.show("asicfs: cannot open \(name)", PrintableText.escaped(reason), urgent: true,
                                 configuration: configuration)
    }

    /// Runs `asicfs mount …` as a child with its stderr caught (and passed on to ours), so that
    /// its reason can be notified. A file, not a pipe: the daemon it leaves may hold it open.
    func runMount(_ arguments: [String]) throws -> Int32 {
        guard let capture = tmpfile() else { return try runSelf(arguments) }
        defer { fclose(capture) }
        let status = try runSelf(arguments, stderr: fileno(capture))
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = pread(fileno(capture), &buffer, buffer.count, off_t(text.count))
            if count <= 0 { break }
            text += buffer[..<count]
        }
        FileHandle.standardError.write(Data(text))
        if let last = String(decoding: text, as: UTF8.self).split(separator: "\n").last {
            childReason = last.hasPrefix("asicfs: ") ? String(last.dropFirst(8)) : String(last)
        }
        return status
    }

    /// Why `path` (a container, or a browse mount's folder) cannot be changed there — the file
    /// or its folder is not writable (read-only storage, no permission) — or nil.
    static func unwritableReason(_ path: String, isFolder: Bool) -> String? {
        for candidate in isFolder ? [path] : [path, PathText.folder(of: path)] where access(candidate, W_OK) != 0 {
            return "\(candidate) cannot be written (\(String(cString: strerror(errno))))"
        }
        return nil
    }
}

import ASiC
import Foundation

/// Where a detached daemon's errors go: it has no terminal any more (its stderr is /dev/null),
/// so a failed save or signing is also sent to the system log, which systemd's journal and
/// syslog daemons both read from /dev/log (RFC 3164 datagrams: "<PRI>asicfs[PID]: TEXT").
/// Sending never blocks and never fails the caller; without a log socket nothing is sent.
enum SystemLog {
    /// Set once the daemon has detached (a foreground mount reports on stderr instead).
    nonisolated(unsafe) static var enabled = false
    /// The log socket; `ASICFS_TEST_SYSLOG` names another one for the tests.
    static let socketPath = ProcessInfo.processInfo.environment["ASICFS_TEST_SYSLOG"].flatMap { $0.isEmpty ? nil : $0 } ?? "/dev/log"

    /// LOG_USER (1 << 3) | LOG_ERR (3).
    static func error(_ text: String) {
        guard enabled else { return }
        send(priority: 8 | 3, text)
    }

    /// A problem the daemon only reports (nothing fails for good): on stderr in a foreground
    /// mount, in the system log once detached.
    static func report(_ text: String) {
        if enabled { return error(text) }
        FileHandle.standardError.write(Data("asicfs: \(PrintableText.escaped(text))\n".utf8))
    }

    static func send(priority: Int, _ text: String) {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(socketPath.utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path)
            raw[path.count] = 0
        }
        // One line: a message never carries a newline into the log.
        let line = "<\(priority)>asicfs[\(getpid())]: " + PrintableText.escaped(text)
        let bytes = Array(line.utf8.prefix(4000))
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL), $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}

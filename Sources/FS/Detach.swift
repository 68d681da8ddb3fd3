import ASiC
import Foundation

/// How a mount's daemon leaves `asicfs mount` behind. These are fuse_daemonize's steps (fork,
/// setsid, chdir to /, standard streams to /dev/null), except that the command does not end
/// when the daemon has started: it waits for the daemon's verdict on the container, which is
/// checked after the mount is made. It then exits 0 once the mount is ready, or 1 with the
/// check's one-line error (by then the mount is gone again), so `asicfs mount` reports every
/// failure as before.
enum Detach {
    /// Forks. The parent waits for the verdict and exits with it (it never returns); the child,
    /// the daemon, gets the channel to report on. Call it before any thread exists: fork()
    /// keeps only the calling thread.
    static func intoDaemon() throws -> Verdict {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw ContainerError.refused("cannot detach from the terminal (pipe: \(String(cString: strerror(errno))))") }
        switch fork() {
        case -1:
            throw ContainerError.refused("cannot detach from the terminal (fork: \(String(cString: strerror(errno))))")
        case 0:
            close(ends[0])
            _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
            setsid()
            chdir("/")
            let null = open("/dev/null", O_RDWR)
            if null >= 0 {
                for stream in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] { dup2(null, stream) }
                if null > STDERR_FILENO { close(null) }
            }
            return Verdict(fd: ends[1])
        default:
            close(ends[1])
            awaitVerdict(from: ends[0])
        }
    }

    /// The parent's side: the daemon writes "R" when the mount is ready, or "F" and the line
    /// to print. Nothing at all means it died before it got that far.
    private static func awaitVerdict(from fd: Int32) -> Never {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n > 0 {
                received += buffer[0..<n]
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        switch received.first {
        case UInt8(ascii: "R"):
            _exit(0)
        case UInt8(ascii: "F"):
            report(String(decoding: received.dropFirst(), as: UTF8.self))
        default:
            report("the asicfs daemon ended before the mount was ready")
        }
        _exit(1)
    }

    /// One line on stderr, as the command line prints its errors.
    private static func report(_ line: String) {
        let text = "asicfs: " + PrintableText.escaped(line) + "\n"
        _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
    }

    /// The daemon's side of the pipe: told once, then closed.
    final class Verdict: @unchecked Sendable {
        private var fd: Int32
        private let lock = NSLock()

        init(fd: Int32) { self.fd = fd }

        func ready() { send(Array("R".utf8)) }

        func failed(_ line: String) { send(Array(("F" + line).utf8)) }

        private func send(_ bytes: [UInt8]) {
            lock.withLock {
                guard fd >= 0 else { return }
                var offset = 0
                while offset < bytes.count {
                    let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { break }
                    offset += n
                }
                close(fd)
                fd = -1
            }
        }
    }
}

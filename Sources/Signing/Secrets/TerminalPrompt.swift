import Crypto
import Glibc

/// A no-echo prompt on the controlling terminal (`/dev/tty`), for when there is no pinentry.
/// Ctrl-C, SIGTERM or SIGHUP at the prompt restore the echo before the process ends.
public enum TerminalPrompt {
    /// True when this process has a terminal to ask on.
    public static var isAvailable: Bool {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    /// Reads one line with echo off, straight into wiped memory. Ctrl-D (end of input with
    /// nothing typed) cancels.
    public static func read(prompt: String, what: String) throws -> SecretBytes {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw SecretEntryError.unavailable("no terminal to ask for the \(what) on") }
        defer { close(fd) }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        var saved = termios()
        tcgetattr(fd, &saved)
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        EchoRestore.arm(fd: fd, saved: saved)
        tcsetattr(fd, TCSAFLUSH, &quiet)
        defer {
            tcsetattr(fd, TCSAFLUSH, &saved)
            EchoRestore.disarm()
            _ = write(fd, "\n", 1)
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        defer { buffer.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } } }
        var used = 0
        var byte: UInt8 = 0
        defer { byte = 0 }
        var ended = false
        while used < buffer.count {
            let n = Glibc.read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { ended = true; break }
            if byte == 0x0A { break }
            buffer[used] = byte
            used += 1
        }
        if ended && used == 0 { throw SecretEntryError.cancelled(what) }
        return SecretBytes(Array(buffer[..<used]))
    }
}

/// While echo is off for a secret: a signal that ends the process restores the terminal first
/// (only async-signal-safe calls in the handler: tcsetattr, write, signal, raise).
enum EchoRestore {
    nonisolated(unsafe) static var fd: Int32 = -1
    nonisolated(unsafe) static var saved = termios()
    static let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    static func arm(fd: Int32, saved: termios) {
        Self.saved = saved
        Self.fd = fd
        for number in signals {
            signal(number) { received in
                if EchoRestore.fd >= 0 {
                    _ = tcsetattr(EchoRestore.fd, TCSANOW, &EchoRestore.saved)
                    _ = write(EchoRestore.fd, "\n", 1)
                }
                signal(received, SIG_DFL)
                raise(received)
            }
        }
    }

    static func disarm() {
        for number in signals { signal(number, SIG_DFL) }
        fd = -1
    }
}

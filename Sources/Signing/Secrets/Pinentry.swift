import ASiC
import Crypto
import Foundation
import Glibc

/// A pinentry program driven over the Assuan protocol, as GnuPG and p11-kit do: SETTITLE,
/// SETDESC, SETPROMPT, SETERROR, then GETPIN; the PIN comes back in a `D` line
/// (percent-escaped) and is decoded straight into wiped memory. The program gets this process's
/// environment (for DISPLAY and the like) and never a secret: secrets only travel on its stdout.
struct Pinentry {
    let program: String

    /// Assuan's error for a cancelled dialog: GPG_ERR_CANCELED (99) from source "pinentry" (5).
    static let cancelledCode = 83886179

    /// Asks once (twice, under two prompts, for a request that must be confirmed).
    func ask(_ request: SecretRequest) throws -> SecretBytes {
        let session = try Session(program: program)
        defer { session.close() }
        try session.expectOK("greeting")
        if let tty = ttynameOfStandardInput() {
            try session.command("OPTION ttyname=\(tty)")
            if let term = ProcessInfo.processInfo.environment["TERM"] { try session.command("OPTION ttytype=\(term)") }
        }
        // Names come from files and certificates: no control character reaches the dialog.
        try session.command("SETTITLE " + Self.escape(PrintableText.escaped(request.title)))
        try session.command("SETDESC " + Self.escape(PrintableText.escaped(request.description)))
        try session.command("SETPROMPT " + Self.escape(PrintableText.escaped(request.prompt) + ":"))
        if let error = request.error { try session.command("SETERROR " + Self.escape(PrintableText.escaped(error))) }
        let first = try session.getPIN(what: request.prompt)
        guard request.confirm else { return first }
        try session.command("SETERROR")
        try session.command("SETPROMPT " + Self.escape(PrintableText.escaped(request.prompt) + " again:"))
        let second = try session.getPIN(what: request.prompt)
        defer { second.wipe() }
        guard first.withBytes({ a in second.withBytes { b in a.elementsEqual(b) } }) else {
            first.wipe()
            throw SecretEntryError.invalid("the two new \(request.prompt) values differ")
        }
        return first
    }

    private func ttynameOfStandardInput() -> String? {
        guard isatty(STDIN_FILENO) == 1, let name = ttyname(STDIN_FILENO) else { return nil }
        return String(cString: name)
    }

    /// Assuan's escaping of a command argument: %, CR and LF as %XX.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "%": out += "%25"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// One running pinentry: its stdin and stdout are one end of a socket pair, so that a write
    /// to a pinentry that died is an error (MSG_NOSIGNAL), not a SIGPIPE.
    final class Session {
        let pid: pid_t
        let socket: Int32
        private var pending: [UInt8] = []
        private let program: String

        init(program: String) throws {
            self.program = program
            var ends: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
                throw SecretEntryError.unavailable("cannot start the pinentry program \(program): \(String(cString: strerror(errno)))")
            }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_adddup2(&actions, ends[1], 0)
            posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
            // Its own complaints (a dialog that cannot open) must not break asicfs's one-line
            // errors; a terminal pinentry draws on the tty it is given, not on stderr.
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            let argv: [UnsafeMutablePointer<CChar>?] = [strdup(program), nil]
            defer { argv.forEach { free($0) } }
            var child: pid_t = 0
            let rc = posix_spawn(&child, program, &actions, nil, argv, environ)
            Glibc.close(ends[1])
            guard rc == 0 else {
                Glibc.close(ends[0])
                throw SecretEntryError.unavailable("cannot start the pinentry program \(program): \(String(cString: strerror(rc)))")
            }
            pid = child
            socket = ends[0]
            PinentryDialogs.started(child)
        }

        func close() {
            _ = try? send("BYE")
            Glibc.close(socket)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            PinentryDialogs.ended(pid)
            pending.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
        }

        func send(_ line: String) throws {
            var bytes = Array((line + "\n").utf8)
            var sent = 0
            while sent < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw SecretEntryError.unavailable("the pinentry program \(program) stopped answering") }
                sent += n
            }
            bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
        }

        /// The next line, without its newline, into a buffer the caller wipes.
        func readLine() throws -> [UInt8] {
            while true {
                if let newline = pending.firstIndex(of: 0x0A) {
                    let line = Array(pending[..<newline])
                    pending.withUnsafeMutableBytes { buffer in
                        if let base = buffer.baseAddress { explicit_bzero(base, newline + 1) }
                    }
                    pending.removeFirst(newline + 1)
                    return line
                }
                var chunk = [UInt8](repeating: 0, count: 512)
                let n = chunk.withUnsafeMutableBytes { Glibc.read(socket, $0.baseAddress!, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw SecretEntryError.unavailable("the pinentry program \(program) ended unexpectedly") }
                pending.reserveCapacity(pending.count + n)
                pending += chunk[..<n]
                chunk.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
            }
        }

        /// Sends a command and waits for its OK (status and comment lines are skipped).
        func command(_ line: String) throws {
            try send(line)
            try expectOK(line.split(separator: " ").first.map(String.init) ?? line)
        }

        func expectOK(_ what: String) throws {
            while true {
                let line = try readLine()
                if line.starts(with: Array("OK".utf8)) { return }
                if line.starts(with: Array("ERR".utf8)) { throw error(line, what: what) }
            }
        }

        /// GETPIN: the D line's percent-escapes decoded into the secret.
        func getPIN(what: String) throws -> SecretBytes {
            try send("GETPIN")
            var secret: SecretBytes? = nil
            while true {
                var line = try readLine()
                defer { line.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } } }
                if line.starts(with: [0x44, 0x20]) {  // "D "
                    secret = Self.decode(line.dropFirst(2))
                } else if line.starts(with: Array("OK".utf8)) {
                    return secret ?? SecretBytes([])
                } else if line.starts(with: Array("ERR".utf8)) {
                    secret?.wipe()
                    throw error(line, what: what)
                }
            }
        }

        private func error(_ line: [UInt8], what: String) -> SecretEntryError {
            let text = String(decoding: line.dropFirst(4), as: UTF8.self)
            let code = text.split(separator: " ").first.flatMap { Int($0) }
            if code == Pinentry.cancelledCode || (code.map { $0 & 0xFFFF == 99 } ?? false) { return .cancelled(what) }
            return .unavailable("the pinentry program \(program) failed: \(text)")
        }

        /// `%XX` escapes decoded, into a fixed buffer that is wiped.
        static func decode(_ escaped: ArraySlice<UInt8>) -> SecretBytes {
            var buffer = [UInt8](repeating: 0, count: escaped.count)
            defer { buffer.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } } }
            var used = 0
            var index = escaped.startIndex
            func hex(_ byte: UInt8) -> UInt8? {
                switch byte {
                case 0x30...0x39: byte - 0x30
                case 0x41...0x46: byte - 0x37
                case 0x61...0x66: byte - 0x57
                default: nil
                }
            }
            while index < escaped.endIndex {
                if escaped[index] == 0x25, index + 2 < escaped.endIndex, let high = hex(escaped[index + 1]), let low = hex(escaped[index + 2]) {
                    buffer[used] = high << 4 | low
                    index += 3
                } else {
                    buffer[used] = escaped[index]
                    index += 1
                }
                used += 1
            }
            return SecretBytes(Array(buffer[..<used]))
        }
    }
}

import Configuration
import Foundation

/// Shows a Mobile-ID or Smart-ID verification code as a desktop notification (notify-send), so a
/// user who started the signing from a script or a file manager still sees it. Only where a
/// desktop session is present, and not with `notify = no`. Failing to notify is never an error.
public enum DesktopNotification {
    public static func verificationCode(_ code: String, method: String, configuration: Configuration,
                                        environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard configuration["notify"] != "no", isDesktopSession(environment),
              let program = findInPath("notify-send", environment) else { return }
        let service = method == "smart-id" ? "Smart-ID" : method == "mobile-id" ? "Mobile-ID" : method
        let title = "asicfs: \(service) verification code \(code)"
        let body = "Sign only if your phone shows the same code: \(code)"
        spawnDetached(program, ["--app-name=asicfs", "--urgency=critical", title, body])
    }

    public static func isDesktopSession(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        ["DISPLAY", "WAYLAND_DISPLAY"].contains { !(environment[$0] ?? "").isEmpty }
    }

    public static func findInPath(_ name: String, _ environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    /// Starts the program and reaps it on a background thread: a slow notification daemon never
    /// holds up the signing.
    static func spawnDetached(_ program: String, _ arguments: [String]) {
        guard let child = spawnQuietly(program, arguments) else { return }
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        }
    }

    /// Runs a desktop program found on PATH (xdg-open, …) with no output and waits for it: its
    /// exit status, 127 when it is not there.
    @discardableResult
    public static func run(_ name: String, _ arguments: [String]) -> Int32 {
        guard let program = findInPath(name), let child = spawnQuietly(program, arguments) else { return 127 }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        return (status >> 8) & 0xff
    }

    /// posix_spawn with standard input and output on /dev/null.
    private static func spawnQuietly(_ program: String, _ arguments: [String]) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        return posix_spawn(&pid, program, &actions, nil, argv, environ) == 0 ? pid : nil
    }
}

/// A desktop notification that a later one replaces in place (notify-send --print-id, then
/// --replace-id): "Signing contract.asice…" becomes "Signed: …" or "Signing failed: …". The
/// first is shown on a background thread; the replacement waits at most two seconds for its id,
/// and without one it is simply shown as a new notification.
public final class ReplaceableNotification: @unchecked Sendable {
    private let condition = NSCondition()
    private var id: String?
    private var shown = false
    private let program: String?

    /// Shows `title`/`body` now, where a desktop session is present and `notify` is not `no`.
    public init(_ title: String, _ body: String, configuration: Configuration,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        program = configuration["notify"] != "no" && DesktopNotification.isDesktopSession(environment)
            ? DesktopNotification.findInPath("notify-send", environment) : nil
        guard let program else { return }
        Thread.detachNewThread { [self] in
            let printed = DesktopNotification.output(of: program, ["--app-name=asicfs", "--print-id", title, body])
            condition.withLock {
                id = printed?.split(separator: "\n").first.map(String.init).flatMap { UInt32($0) != nil ? $0 : nil }
                shown = true
                condition.broadcast()
            }
        }
    }

    /// Replaces the notification with how it ended.
    public func replace(_ title: String, _ body: String, urgent: Bool = false) {
        guard let program else { return }
        let known = condition.withLock { () -> String? in
            let deadline = Date().addingTimeInterval(2)
            while !shown && condition.wait(until: deadline) {}
            return id
        }
        var arguments = ["--app-name=asicfs"] + (urgent ? ["--urgency=critical"] : [])
        if let known { arguments.append("--replace-id=\(known)") }
        DesktopNotification.spawnDetached(program, arguments + [title, body])
    }
}

extension DesktopNotification {
    /// One notification, not replaced (the verdict of `asicfs verify --notify`).
    public static func show(_ title: String, _ body: String, urgent: Bool, configuration: Configuration,
                            environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard configuration["notify"] != "no", isDesktopSession(environment),
              let program = findInPath("notify-send", environment) else { return }
        spawnDetached(program, ["--app-name=asicfs"] + (urgent ? ["--urgency=critical"] : []) + [title, body])
    }

    /// Runs a program and returns what it printed (nil if it could not run or took over 2 s).
    static func output(of program: String, _ arguments: [String]) -> String? {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclose(&actions, ends[0])
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, program, &actions, nil, argv, environ)
        close(ends[1])
        defer { close(ends[0]) }
        guard rc == 0 else { return nil }
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        var poll = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline, Glibc.poll(&poll, 1, 100) >= 0 {
            if poll.revents == 0 { continue }
            let n = read(ends[0], &buffer, buffer.count)
            if n <= 0 { break }
            text += buffer[..<n]
        }
        let child = pid
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        }
        return String(decoding: text, as: UTF8.self)
    }
}

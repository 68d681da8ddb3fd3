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

    static func isDesktopSession(_ environment: [String: String]) -> Bool {
        ["DISPLAY", "WAYLAND_DISPLAY"].contains { !(environment[$0] ?? "").isEmpty }
    }

    static func findInPath(_ name: String, _ environment: [String: String]) -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    /// Starts the program and reaps it on a background thread: a slow notification daemon never
    /// holds up the signing.
    static func spawnDetached(_ program: String, _ arguments: [String]) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, program, &actions, nil, argv, environ) == 0 else { return }
        let child = pid
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        }
    }
}

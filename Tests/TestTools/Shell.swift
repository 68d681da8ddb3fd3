import Foundation

/// Why a program could not be started.
public struct ShellError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs programs (real tools: shell commands, openssl, python3) and waits for them with waitpid.
/// (Foundation's Process can miss the exit of a child that forks a daemon, so it is not used here.)
public enum Shell {
    public struct Output {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// Starts a program with stdin from /dev/null and stdout/stderr into the given files, in
    /// this process's environment plus `environment`.
    public static func spawn(_ program: String, _ arguments: [String], stdout: String, stderr: String,
                             environment: [String: String] = [:]) throws -> pid_t {
        let executable = program.hasPrefix("/") ? program : "/usr/bin/env"
        let argv = (program.hasPrefix("/") ? [program] : ["env", program]) + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var variables = ProcessInfo.processInfo.environment
        for (key, value) in environment { variables[key] = value }
        let cEnvironment = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { cEnvironment.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, nil, cArguments, cEnvironment)
        guard rc == 0 else { throw ShellError("cannot start \(program): \(String(cString: strerror(rc)))") }
        return pid
    }

    /// Waits for a child and returns its exit status (128 + signal when killed).
    public static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }

    /// Runs a program to its end; `environment` is added to this process's.
    @discardableResult
    public static func run(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Output {
        let base = NSTemporaryDirectory() + "asicfs-shell-\(getpid())-\(UUID().uuidString.prefix(8))"
        defer { unlink(base + ".out"); unlink(base + ".err") }
        let pid = try spawn(program, arguments, stdout: base + ".out", stderr: base + ".err", environment: environment)
        let status = wait(pid)
        let out = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        return Output(status: status, stdout: out, stderr: err)
    }

    /// `sh -c script`, for pipelines of real tools.
    @discardableResult
    public static func sh(_ script: String) throws -> Output { try run("/bin/sh", ["-c", script]) }

    public static func python(_ code: String, _ args: [String] = []) throws -> Output {
        try run("/usr/bin/python3", ["-c", code] + args)
    }
}

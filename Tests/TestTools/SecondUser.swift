import Foundation

/// A second, unprivileged user (`asicfs-test2`) for tests of what another user on the machine
/// can and cannot do. The tests run as root; the user is made the first time it is needed
/// (useradd, a system account without home or login) and kept for later runs.
public enum SecondUser {
    public static let name = "asicfs-test2"

    /// The user's uid and gid, made first if the machine has no such user.
    public static func ids() throws -> (user: uid_t, group: gid_t) {
        if let ids = lookUp() { return ids }
        let made = try Shell.run("/usr/sbin/useradd", ["--system", "--user-group", "--no-create-home",
                                                       "--shell", "/usr/sbin/nologin", name])
        // Another test run may have made it meanwhile (useradd then fails): look again.
        guard let ids = lookUp() else { throw SecondUserError("useradd \(name) failed: \(made.stderr)") }
        return ids
    }

    private static func lookUp() -> (user: uid_t, group: gid_t)? {
        guard let entry = getpwnam(name) else { return nil }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    /// Runs a program as the user: its uid and gid, the supplementary `groups` given (none by
    /// default), root's environment.
    public static func run(_ program: String, _ arguments: [String], groups: [gid_t] = []) throws -> Shell.Output {
        try Shell.run(setpriv, try command(program, arguments, groups: groups))
    }

    public static let setpriv = "/usr/bin/setpriv"

    /// The arguments to `setpriv` that run `program` as the user (`Shell.spawn` runs it in the background).
    public static func command(_ program: String, _ arguments: [String], groups: [gid_t] = []) throws -> [String] {
        let (user, group) = try ids()
        let groupOption = groups.isEmpty ? "--clear-groups" : "--groups=" + groups.map(String.init).joined(separator: ",")
        return ["--reuid=\(user)", "--regid=\(group)", groupOption, program] + arguments
    }

    public static func python(_ code: String, _ arguments: [String] = [], groups: [gid_t] = []) throws -> Shell.Output {
        try run("/usr/bin/python3", ["-c", code] + arguments, groups: groups)
    }

    /// Gives a file or folder to the user.
    public static func own(_ path: String) throws {
        let (user, group) = try ids()
        guard chown(path, user, group) == 0 else { throw SecondUserError("chown \(path): \(String(cString: strerror(errno)))") }
    }
}

public struct SecondUserError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

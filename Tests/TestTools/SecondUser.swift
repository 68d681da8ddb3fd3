import Foundation

/// An unprivileged user for tests of what another user on the machine can and cannot do: the
/// other user of a shared folder, who plants things for asicfs to trip on, or the user asicfs
/// runs as. The tests run as root; an account is made the first time it is needed (useradd, a
/// system account without home or login) and kept for later runs.
///
/// The static members act as the usual one, `asicfs-test2`; a test that needs two users gets an
/// account by name (`SecondUser.account(SecondUser.thirdName)`) and uses the same members on it.
public struct SecondUser: Sendable {
    public static let name = "asicfs-test2"
    /// A second unprivileged account, for a test that needs two users (one runs asicfs, the
    /// other attacks it).
    public static let thirdName = "asicfs-test1"
    public static let setpriv = "/usr/bin/setpriv"

    public let name: String
    public let uid: uid_t
    public let gid: gid_t

    /// The account `name`, made first if the machine has no such user.
    public static func account(_ name: String = SecondUser.name) throws -> SecondUser {
        if let found = lookUp(name) { return found }
        let made = try Shell.run("/usr/sbin/useradd", ["--system", "--user-group", "--no-create-home",
                                                       "--shell", "/usr/sbin/nologin", name])
        // Another test run may have made it meanwhile (useradd then fails): look again.
        guard let found = lookUp(name) else { throw SecondUserError("useradd \(name) failed: \(made.stderr)") }
        return found
    }

    private static func lookUp(_ name: String) -> SecondUser? {
        guard let entry = getpwnam(name) else { return nil }
        return SecondUser(name: name, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    // MARK: The usual user, asicfs-test2

    /// The user's uid and gid, made first if the machine has no such user.
    public static func ids() throws -> (user: uid_t, group: gid_t) {
        let user = try account()
        return (user.uid, user.gid)
    }

    /// Runs a program as the user: its uid and gid, the supplementary `groups` given (none by
    /// default), root's environment.
    public static func run(_ program: String, _ arguments: [String], groups: [gid_t] = []) throws -> Shell.Output {
        try account().run(program, arguments, groups: groups)
    }

    /// The arguments to `setpriv` that run `program` as the user (`Shell.spawn` runs it in the background).
    public static func command(_ program: String, _ arguments: [String], groups: [gid_t] = []) throws -> [String] {
        try account().command(program, arguments, groups: groups)
    }

    public static func python(_ code: String, _ arguments: [String] = [], groups: [gid_t] = []) throws -> Shell.Output {
        try account().python(code, arguments, groups: groups)
    }

    /// Gives a file or folder to the user.
    public static func own(_ path: String) throws {
        try account().own(path)
    }

    // MARK: Any account

    /// setpriv's arguments that make the rest of its command line run as this user.
    public func setprivArguments(groups: [gid_t] = []) -> [String] {
        let groupOption = groups.isEmpty ? "--clear-groups" : "--groups=" + groups.map(String.init).joined(separator: ",")
        return ["--reuid=\(uid)", "--regid=\(gid)", groupOption]
    }

    public func command(_ program: String, _ arguments: [String], groups: [gid_t] = []) -> [String] {
        setprivArguments(groups: groups) + [program] + arguments
    }

    public func run(_ program: String, _ arguments: [String], groups: [gid_t] = []) throws -> Shell.Output {
        try Shell.run(Self.setpriv, command(program, arguments, groups: groups))
    }

    public func python(_ code: String, _ arguments: [String] = [], groups: [gid_t] = []) throws -> Shell.Output {
        try run("/usr/bin/python3", ["-c", code] + arguments, groups: groups)
    }

    /// Runs a shell script as this user; `arguments` are its $1, $2, ...
    @discardableResult
    public func sh(_ script: String, _ arguments: [String] = []) throws -> Shell.Output {
        try run("/bin/sh", ["-c", script, "sh"] + arguments)
    }

    /// Gives a file or folder to this user.
    public func own(_ path: String) throws {
        guard chown(path, uid, gid) == 0 else { throw SecondUserError("chown \(path): \(String(cString: strerror(errno)))") }
    }
}

public struct SecondUserError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

import ASiC
import FS
import Foundation
import Signing

/// Where `asicfs open` mounts: `$XDG_RUNTIME_DIR/asicfs/NAME` (a private, per-login folder that
/// is emptied at logout), else `/tmp/asicfs-UID/NAME`; either folder is used only when it is
/// private to the user (`PrivateFolder`).
enum OpenFolders {
    static var base: String {
        PrivateFolder.runtimeDirectory.map { $0 + "/asicfs" } ?? "/tmp/asicfs-\(getuid())"
    }

    /// The folder for `container`: the one it is mounted on already, else NAME (or "NAME (2)", …
    /// when another container of that name is open).
    static func mountpoint(for container: String) -> (path: String, mounted: Bool) {
        if let mounted = ContainerLock.asicfsMountpoint(of: container) { return (mounted, true) }
        // Control characters written out (as `PrintableText` shows them): the folder's path is
        // then printed as it is, one line that a script can use.
        let name = PrintableText.escaped(PathText.lastComponent(of: container))
        var candidate = base + "/" + name
        var number = 2
        while Unmount.isMounted(candidate) {
            candidate = base + "/\(name) (\(number))"
            number += 1
        }
        return (candidate, false)
    }
}

let openCommand = Command(
    name: "open",
    synopsis: "open CONTAINER [-f] [--no-file-manager]",
    summary: "mount a container for the desktop and open it in the file manager",
    details: """
    Mounts CONTAINER on $XDG_RUNTIME_DIR/asicfs/NAME (NAME is the file's name; the folder is
    made if needed; without XDG_RUNTIME_DIR, /tmp/asicfs-UID/NAME, used only when that is a
    real folder of yours with mode 0700), or finds the mount it has already, and opens that folder with xdg-open
    when a desktop session is present (DISPLAY or WAYLAND_DISPLAY). Prints the folder's path
    on one line (control characters in NAME are written out: \t, \n). This is what the desktop
    file (double-click on a .asice, .cdoc or .cdoc2 file) runs; `asicfs close` unmounts. An
    encrypted container (.cdoc, .cdoc2) is decrypted through the folder's .asicfs/decrypt/.
    A container that cannot be written there (read-only storage) is mounted read-only; a
    DIRECTORY is mounted in browse mode; stderr says so. A failure is also a desktop
    notification, and leaves no folder behind.
    An encrypted container (CDOC 1.x, CDOC2, told by content) with an EC key among its
    recipients (status/recipients) is decrypted with the inserted ID-card before the folder opens: PIN1 is asked by
    pinentry (or on the reader's PIN pad), as for a request to the mount's
    .asicfs/decrypt/id-card. Without a card, with a wrong PIN1 or a cancelled dialog, open fails
    (one line, a notification) and unmounts; to decrypt in another way, use `asicfs mount` and
    .asicfs/decrypt/<method>. One for keys or passwords only is mounted undecrypted (stderr says
    so), as is any with -f.
    -f keeps the mount in the foreground (the systemd user unit asicfs@.service uses it).
    """,
    options: [OptionSpec(names: ["-f", "--foreground"], takesValue: false, help: "mount in the foreground (for systemd)"),
              OptionSpec(names: ["--no-file-manager"], takesValue: false, help: "do not run xdg-open")],
    run: { arguments, context in
        // The desktop file runs this without a terminal: every failure is a notification too.
        let attempt = OpenAttempt(given: arguments.positionals.first ?? "", configuration: context.configuration)
        return try attempt.reportingFailure { try openContainer(arguments, context, attempt) }
    })

private func openContainer(_ arguments: ParsedArguments, _ context: CommandContext, _ attempt: OpenAttempt) throws -> Int32 {
    try requirePositionals(arguments, atLeast: 1, "CONTAINER")
    if arguments.positionals.count > 1 { throw UsageError("open takes one CONTAINER") }
    guard let resolved = realpath(arguments.positionals[0], nil) else {
        throw ContainerError.io(path: arguments.positionals[0], operation: "cannot open", errno: errno)
    }
    let container = String(cString: resolved)
    free(resolved)
    let (mountpoint, mounted) = OpenFolders.mountpoint(for: container)
    if !mounted {
        try PrivateFolder.ensure(OpenFolders.base)
        var isFolder: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: container, isDirectory: &isFolder)
        if isFolder.boolValue {
            Terminal.error("\(container) is a folder: opening it in browse mode (every container in it shows as a folder)")
        }
        let readOnly = OpenAttempt.unwritableReason(container, isFolder: isFolder.boolValue)
        if let readOnly {
            Terminal.error("\(readOnly): opening it read-only")
        }
        let made = access(mountpoint, F_OK) != 0
        guard (try? FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true,
                                                         attributes: [.posixPermissions: 0o700])) != nil else {
            throw ContainerError.io(path: mountpoint, operation: "cannot make the folder", errno: errno)
        }
        // A failed open leaves no folder behind.
        if made { attempt.madeFolder = mountpoint }
        var request = MountRequest(container: container, mountpoint: mountpoint)
        request.configuration = context.configuration
        request.readOnly = readOnly != nil
        if arguments.has("--foreground") {
            OpenFolders.print(mountpoint)
            request.foreground = true
            return try Mounter.run(request)
        }
        // A child does the mounting: the daemon it leaves behind detaches, and this process
        // goes on to open the folder.
        let status = try attempt.runMount(["mount", container, mountpoint] + context.settingArguments
                                          + (readOnly != nil ? ["-o", "ro"] : []))
        if status != 0 { return status }
        if EncryptedMount.isEncrypted(container) {
            if OpenDecryption.hasCardRecipient(at: mountpoint) {
                try OpenDecryption.decryptWithIDCard(container, at: mountpoint)
            } else {
                Terminal.error("no recipient of \(PrintableText.escaped(PathText.lastComponent(of: container))) is an EC key an ID-card "
                    + "could hold: it stays encrypted until a request to .asicfs/decrypt/<method> decrypts it")
            }
        }
    }
    attempt.madeFolder = nil
    OpenFolders.print(mountpoint)
    if !arguments.has("--no-file-manager") { DesktopSession.open(folder: mountpoint) }
    return 0
}

let closeCommand = Command(
    name: "close",
    synopsis: "close CONTAINER|MOUNTPOINT",
    summary: "unmount what `open` mounted, once it is saved",
    details: """
    Unmounts the mount of CONTAINER (or MOUNTPOINT), waiting until the container is saved, as
    `asicfs umount` does (only asicfs mounts), and removes the folder `open` made for it. A container deleted while
    mounted is found by the path it had.
    """,
    options: [],
    run: { arguments, _ in
        try requirePositionals(arguments, atLeast: 1, "CONTAINER or MOUNTPOINT")
        let path = try closeTarget(arguments.positionals[0])
        var isFolder: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
        let mountpoint: String
        if isFolder.boolValue {
            mountpoint = path
        } else {
            guard let found = ContainerLock.asicfsMountpoint(of: path) else { throw MountFailure("\(path) is not mounted") }
            mountpoint = found
        }
        try UnmountCommand.run(mountpoint)
        if mountpoint.hasPrefix(OpenFolders.base + "/") { rmdir(mountpoint) }
        return 0
    })

/// The absolute path `close` looks for: the file or folder given, or, when a container was
/// deleted while mounted, the path it had (its folder resolved): its mount still names it.
private func closeTarget(_ given: String) throws -> String {
    if let resolved = realpath(given, nil) {
        defer { free(resolved) }
        return String(cString: resolved)
    }
    let code = errno
    guard code == ENOENT, let folder = realpath(PathText.folder(of: given), nil) else {
        throw ContainerError.io(path: given, operation: "cannot close", errno: code)
    }
    defer { free(folder) }
    let path = String(cString: folder) + "/" + PathText.lastComponent(of: given)
    guard ContainerLock.asicfsMountpoint(of: path) != nil else {
        throw ContainerError.io(path: given, operation: "cannot close", errno: code)
    }
    return path
}

/// Runs this asicfs again with `arguments` and waits for it (its output is ours, or its
/// stderr goes to the descriptor `stderr`).
func runSelf(_ arguments: [String], stderr: Int32? = nil) throws -> Int32 {
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let stderr { posix_spawn_file_actions_adddup2(&actions, stderr, STDERR_FILENO) }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    guard rc == 0 else { throw MountFailure("cannot run \(executable): \(String(cString: strerror(rc)))") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return status & 0x7f == 0 ? (status >> 8) & 0xff : 1
}

extension OpenFolders {
    /// The folder's path on one line: as it is (its name has no control characters, see
    /// `mountpoint`), unless a mount made elsewhere put control characters in it, which are then
    /// shown escaped like every name asicfs prints.
    static func print(_ path: String) {
        FileHandle.standardOutput.write(Data((PrintableText.escaped(path) + "\n").utf8))
    }
}

/// The desktop: open a folder in the file manager.
enum DesktopSession {
    static func open(folder: String) {
        guard DesktopNotification.isDesktopSession() else { return }
        DesktopNotification.run("xdg-open", [folder])
    }
}

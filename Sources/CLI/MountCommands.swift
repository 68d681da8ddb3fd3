import ASiC
import CLinux
import Configuration
import FS
import Foundation

let mountCommand = Command(
    name: "mount",
    synopsis: "mount CONTAINER|DIRECTORY MOUNTPOINT [-f] [-o OPTIONS]",
    summary: "show a container, or every container in a folder, as a folder (FUSE)",
    details: """
    The data files appear as files (names with '/' as subfolders), and the hidden folder
    .asicfs/ shows the container, its signatures and the status (see asicfs(1)). While the
    container is unsigned, files can be copied in, changed, renamed and removed; the container
    is saved atomically a moment after the last change, on fsync and at unmount. A signed
    container is read-only (EPERM); echo remove > .asicfs/signatures/N-NAME/remove removes a
    signature, and nothing in .asicfs can be removed (rm -rf never strips a signature).
    The mount is private to you unless -o allow_other.
    The mount point answers at once, and what is inside waits until the container is checked;
    mount returns then, or fails with the check's error and leaves nothing mounted.
    A mount point that holds the container's folder (or, in browse mode, one inside
    DIRECTORY) is refused: the mount would hide what it serves from its own daemon.

    An encrypted container (CDOC 1.x, CDOC2: told by content) shows only .asicfs/ until
    a request written to .asicfs/decrypt/METHOD (id-card, pkcs11, pkcs12, key, secret,
    password; the parameters of asicfs decrypt) decrypts it; .asicfs/status/recipients
    says who can, status/current how it went. Its files are then read-only (EROFS);
    decrypted bytes stay in spool files encrypted with a key only the daemon holds,
    removed at unmount.

    Browse mode (a DIRECTORY): every .asice, .sce, .bdoc and .asics file below it (any case)
    that is a container is a folder laid out as above (.asics read-only), and so is every
    .cdoc and .cdoc2 file that is an encrypted container (by content; read-only, decrypted
    through its own .asicfs/decrypt/, kept open once decrypted); everything else is
    the real folder, with its own errors. Containers open when entered (EBUSY while another
    program holds one) and are saved, closed and let go a few seconds after their last file
    closes, or at once beyond -o open-containers=N (64) idle ones. mkdir NAME.asice makes a
    container (on disk with its first file), rmdir removes an unsigned one with no data
    files (never a signed one), mv renames the container file; moving a data file between
    containers copies it (EXDEV). A browse mount never follows a symbolic link and never
    shows a real file's user.asicfs.* attributes; with -o allow_other and a root daemon, each
    request on a real file runs with the rights of the user who made it (see SECURITY in
    asicfs(1)).

    Mount options (-o, comma-separated or repeated):
      ro             read-only mount (also, with a notice, when the container cannot be
                     written where it is: read-only storage, no right to write there)
      nonempty       mount on a folder that is not empty or has a mount on it already
                     (refused otherwise: the mount would hide what is there)
      create         create an empty container if CONTAINER does not exist; a missing
                     (or 0-byte) *.cdoc or *.cdoc2 is a new encrypted container (CDOC 1.1,
                     CDOC2 by the extension): copy files in, write certificates (PEM) or
                     "password-file=PATH" or "password" to .asicfs/recipients, then
                     "echo seal > .asicfs/seal" (or unmount) writes it atomically
      open-containers=N  browse mode: containers kept open at once (default 64)
      allow_other    let other users see the mount (needs user_allow_other in /etc/fuse.conf)
      debug          libfuse debug output (implies -f)
      umask=NNN      take these permission bits away from everything shown (in browse mode
                     real files too); data files are never executable
      key=value      a setting (see asicfs --help); anything else is passed to libfuse,
                     except what only fstab and mount(8) use (defaults, noauto, auto, user,
                     users, nouser, owner, nofail, _netdev, comment=..., x-...), which is ignored
    Options are checked before anything is mounted: one libfuse does not take either is named
    with the closest setting or option (exit status 2), and so is a setting naming a missing file.
    mount(8) and fstab work too: mount -t fuse.asicfs CONTAINER MOUNTPOINT -o OPTIONS, or
      /home/me/contract.asice  /home/me/contract  fuse.asicfs  noauto,user  0 0
    run "asicfs CONTAINER MOUNTPOINT -o OPTIONS" (through mount.fuse3), which is this command.
    The mount always uses auto_unmount: if the daemon dies, the kernel mount goes away too.
    """,
    options: [OptionSpec(names: ["-f", "--foreground"], takesValue: false, help: "stay in the foreground")],
    run: { arguments, context in
        try requirePositionals(arguments, atLeast: 2, "CONTAINER (or DIRECTORY) and MOUNTPOINT")
        if arguments.positionals.count > 2 { throw UsageError("mount takes CONTAINER (or DIRECTORY) and MOUNTPOINT") }
        var request = MountRequest(container: arguments.positionals[0], mountpoint: arguments.positionals[1])
        request.foreground = arguments.has("--foreground")
        request.configuration = context.configuration
        var mountsOverAnything = false
        for option in context.mountOptions {
            switch option {
            case MountPointCheck.option: mountsOverAnything = true
            case "ro": request.readOnly = true
            case "rw": request.readOnly = false
            case "create": request.createIfMissing = true
            case "allow_other": request.allowOther = true
            case "debug", "-d": request.debug = true; request.foreground = true
            case _ where option.hasPrefix("open-containers="):
                guard let count = Int(option.dropFirst("open-containers=".count)), count > 0 else {
                    throw UsageError("open-containers takes a number above 0: \(option)")
                }
                request.openContainers = count
            case "": continue
            case _ where option.hasPrefix("umask="):
                guard let mask = UInt16(option.dropFirst(6), radix: 8), mask <= 0o777 else {
                    throw UsageError("umask= takes an octal mask such as 022, not '\(option.dropFirst(6))'")
                }
                request.umask = mask
            case _ where MountOptions.isFstabOnly(option): continue
            default: request.fuseOptions.append(option)
            }
        }
        // Checked before anything is mounted: a typo gets a suggestion, a setting's missing file is named.
        if let unknown = FuseOptionCheck.refused(request.fuseOptions).first { throw UsageError(MountOptions.unknown(unknown)) }
        if let missing = context.configuration.missingFiles().first { throw UsageError(missing) }
        // Read-only storage (or no right to write there): mounted read-only with a notice, as
        // `asicfs open` does, not a failure that never says -o ro.
        var isFolder: ObjCBool = false
        if !request.readOnly, FileManager.default.fileExists(atPath: request.container, isDirectory: &isFolder),
           let reason = OpenAttempt.unwritableReason(request.container, isFolder: isFolder.boolValue) {
            request.notice = "\(reason): mounting it read-only (-o ro)"
            request.readOnly = true
        }
        if !mountsOverAnything {
            // A mount point that holds the container is refused for that, not for being full.
            try MountPointCheck.refuseHidingItsOwnContainer(request.container, request.mountpoint)
            try MountPointCheck.requireUnused(request.mountpoint)
        }
        return try Mounter.run(request)
    })

let umountCommand = Command(
    name: "umount",
    synopsis: "umount MOUNTPOINT",
    summary: "unmount, and wait until the container is saved",
    details: """
    Runs fusermount3 -u, then waits for the asicfs daemon to finish saving and exit.
    Only asicfs mounts (type fuse.asicfs) are unmounted; anything else is refused.
    Unmounting cancels a running signing. When the mount is busy only because readers wait in
    .asicfs/status/wait or status/<method> for that signing, umount cancels it (as
    "echo cancel > .asicfs/sign/METHOD" does; the readers get the "failed: ... cancelled" line)
    and unmounts once they are done (it tries for 5 seconds). When another program keeps the
    mount busy (a shell whose current folder is in it, an open file), umount names that
    process, cancels nothing and exits with status 1.
    """,
    options: [],
    run: { arguments, _ in
        try requirePositionals(arguments, atLeast: 1, "MOUNTPOINT")
        try UnmountCommand.run(arguments.positionals[0])
        return 0
    })

/// `asicfs umount`: unmount, wait for the daemon's final save, and say what it came to. Exit 0
/// only when the daemon saved (or had nothing to save); a daemon that died before or during the
/// save, or whose save failed, is one line and exit 1.
enum UnmountCommand {
    /// How long to wait quietly for the daemon before saying what we wait for.
    static let quietWait: TimeInterval = 3
    /// Saving a large change can take a while; give up waiting (not saving) after ten minutes.
    static let longestWait: TimeInterval = 600

    static func run(_ argument: String) throws {
        guard let resolved = realpath(argument, nil) else {
            throw ContainerError.io(path: argument, operation: "cannot unmount", errno: errno)
        }
        let mountpoint = String(cString: resolved)
        free(resolved)
        // fusermount3 run by root unmounts anything (a tmpfs, a bind mount): only ours are ours.
        if let type = Unmount.filesystemType(at: mountpoint), type != Unmount.asicfsType {
            throw MountFailure("\(mountpoint) is not an asicfs mount (it is \(type)); use umount(8) for it")
        }
        try MountRegistry.checkFolder()
        let daemon = MountRegistry.daemon(for: mountpoint)
        MountRegistry.forgetOutcome(for: mountpoint)
        if let daemon, !daemon.isRunning, !Unmount.isMounted(mountpoint) {
            // Killed earlier: auto_unmount took the mount away, and nothing saved what was pending.
            MountRegistry.forgetDaemon(for: mountpoint)
            throw MountFailure("nothing is mounted on \(mountpoint): its asicfs daemon (pid \(daemon.pid)) had ended without unmounting, "
                               + "so changes made since its last save are not in \(daemon.container)\(spoolNote(daemon))")
        }
        try Unmount.run(mountpoint)
        guard let daemon else { return }
        try waitForExit(of: daemon)
        switch MountRegistry.outcome(for: mountpoint) {
        case .saved?:
            MountRegistry.forgetOutcome(for: mountpoint)
        case .failed(let reason)?:
            MountRegistry.forgetOutcome(for: mountpoint)
            throw MountFailure(reason)
        case nil:
            MountRegistry.forgetDaemon(for: mountpoint)
            throw MountFailure("the asicfs daemon (pid \(daemon.pid)) ended before it had saved \(daemon.container): "
                               + "changes made since its last save are not in it\(spoolNote(daemon))")
        }
    }

    /// Waits for the daemon to exit; after a few seconds says (once, on stderr) what it waits for.
    private static func waitForExit(of daemon: MountRegistry.Daemon) throws {
        let start = Date()
        var told = false
        // Woken the moment the daemon exits (a pidfd polls readable then), not on a timer.
        let exited = clinux_pidfd_open(daemon.pid)
        defer { if exited >= 0 { close(exited) } }
        while daemon.isRunning {
            let waited = Date().timeIntervalSince(start)
            if waited > longestWait {
                throw MountFailure("gave up waiting after \(Int(longestWait / 60)) minutes for the asicfs daemon (pid \(daemon.pid)) "
                                   + "to save \(daemon.container); it is still running and may still save")
            }
            if !told && waited > quietWait {
                told = true
                let why = daemon.isStopped
                    ? "; it is stopped (SIGSTOP or a debugger): 'kill -CONT \(daemon.pid)' lets it go on"
                    : " (a large change takes a while)"
                Terminal.error("waiting for the asicfs daemon (pid \(daemon.pid)) to save \(daemon.container)\(why)")
            }
            if exited >= 0 {
                var ready = pollfd(fd: exited, events: Int16(POLLIN), revents: 0)
                _ = poll(&ready, 1, 100)
            } else {
                usleep(20_000)
            }
        }
    }

    /// Where the files a killed daemon had received are, if it left any.
    private static func spoolNote(_ daemon: MountRegistry.Daemon) -> String {
        guard let folder = MountRouter.spoolFoldersLeft(forContainer: daemon.container, daemon: daemon.pid).first,
              let left = try? FileManager.default.contentsOfDirectory(atPath: folder), !left.isEmpty else { return "" }
        return "; the files it had received over 64 KiB are in \(folder) (without their names), until the next mount of the container removes them"
    }
}

/// The daemon could not save at unmount (the message says where the files went), or the mount
/// is busy (the message names why): one line, printed as it is.
struct MountFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Options that only fstab and mount(8) give meaning to; FUSE helpers ignore them, and so does asicfs.
enum MountOptions {
    static let fstabOnly: Set<String> = ["defaults", "noauto", "auto", "user", "users", "nouser", "owner", "group",
                                         "nofail", "_netdev"]

    static func isFstabOnly(_ option: String) -> Bool {
        fstabOnly.contains(option) || option.hasPrefix("x-") || option.hasPrefix("comment=")
    }

    /// The options `mount` itself reads (see its help).
    static let own: Set<String> = ["ro", "rw", "nonempty", "create", "open-containers", "allow_other", "debug", "umask"]

    /// An option neither asicfs nor libfuse takes: named, with the setting or option it is closest to.
    static func unknown(_ option: String) -> String {
        let name = String(option.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        let known = own.union(Configuration.knownKeys)
        let shown = PrintableText.escaped(option)
        if let closest = Suggestion.closest(to: name, among: known) {
            return "unknown mount option '\(shown)'; did you mean '\(closest)'?"
        }
        return "unknown mount option '\(shown)' (settings: asicfs --help)"
    }
}

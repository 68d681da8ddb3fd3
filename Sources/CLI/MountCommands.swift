import ASiC
import Configuration
import FS
import Foundation

let mountCommand = Command(
    name: "mount",
    synopsis: "mount CONTAINER MOUNTPOINT [-f] [-o OPTIONS]",
    summary: "show a container as a folder (FUSE)",
    details: """
    The data files appear as files (names with '/' as subfolders), and the hidden folder
    .asicfs/ shows the container, its signatures and the status (see asicfs(1)). While the
    container is unsigned, files can be copied in, changed, renamed and removed; the container
    is saved atomically a moment after the last change, on fsync and at unmount. A signed
    container is read-only (EPERM). The mount is private to you unless -o allow_other.

    Mount options (-o, comma-separated or repeated):
      ro             read-only mount
      create         create an empty container if CONTAINER does not exist
      allow_other    let other users see the mount (needs user_allow_other in /etc/fuse.conf)
      debug          libfuse debug output (implies -f)
      key=value      a setting (see asicfs --help); anything else is passed to libfuse
    The mount always uses auto_unmount: if the daemon dies, the kernel mount goes away too.
    """,
    options: [OptionSpec(names: ["-f", "--foreground"], takesValue: false, help: "stay in the foreground")],
    run: { arguments, context in
        try requirePositionals(arguments, atLeast: 2, "CONTAINER and MOUNTPOINT")
        if arguments.positionals.count > 2 { throw UsageError("mount takes CONTAINER and MOUNTPOINT") }
        var request = MountRequest(container: arguments.positionals[0], mountpoint: arguments.positionals[1])
        request.foreground = arguments.has("--foreground")
        request.configuration = context.configuration
        for option in context.mountOptions {
            switch option {
            case "ro": request.readOnly = true
            case "rw": request.readOnly = false
            case "create": request.createIfMissing = true
            case "allow_other": request.allowOther = true
            case "debug", "-d": request.debug = true; request.foreground = true
            case "": continue
            default: request.fuseOptions.append(option)
            }
        }
        return try Mounter.run(request)
    })

let umountCommand = Command(
    name: "umount",
    synopsis: "umount MOUNTPOINT",
    summary: "unmount, and wait until the container is saved",
    details: """
    Runs fusermount3 -u, then waits for the asicfs daemon to finish saving and exit.
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
        guard let resolved = realpath(arguments.positionals[0], nil) else {
            throw ContainerError.io(path: arguments.positionals[0], operation: "cannot unmount", errno: errno)
        }
        let mountpoint = String(cString: resolved)
        free(resolved)
        let daemon = MountRegistry.daemon(for: mountpoint)
        let failureFile = MountRegistry.failureFile(for: mountpoint)
        unlink(failureFile)
        try Unmount.run(mountpoint)
        if let daemon {
            // Saving a large change can take a while; give up waiting (not saving) after ten minutes.
            let deadline = Date().addingTimeInterval(600)
            while MountRegistry.isRunning(daemon) && Date() < deadline { usleep(20_000) }
        }
        if let failure = try? String(contentsOfFile: failureFile, encoding: .utf8) {
            unlink(failureFile)
            throw MountFailure(failure)
        }
        return 0
    })

/// The daemon could not save at unmount (the message says where the files went), or the mount
/// is busy (the message names why): one line, printed as it is.
struct MountFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

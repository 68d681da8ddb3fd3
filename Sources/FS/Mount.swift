import ASiC
import CDOC
import CFuse3
import Configuration
import Foundation
import Signing

/// How to mount: the container (or a folder: browse mode), where, and the options the user gave.
public struct MountRequest: Sendable {
    public var container: String
    public var mountpoint: String
    public var foreground = false
    public var readOnly = false
    public var createIfMissing = false
    public var allowOther = false
    public var debug = false
    /// `-o umask=NNN`: permission bits taken away from every node (never added).
    public var umask: UInt16 = 0
    /// Browse mode: how many containers stay open at once (idle ones beyond it are closed).
    public var openContainers = BrowseFileSystem.defaultOpenContainers
    /// Said on stderr once every check has passed, just before mounting ("… cannot be written:
    /// mounting it read-only"): a mount refused for another reason says only that reason.
    public var notice: String?
    /// Other `-o` options, handed to libfuse unchanged.
    public var fuseOptions: [String] = []
    /// The settings (config file and `-o key=value`): services and trust for signing and validation.
    public var configuration = Configuration()

    public init(container: String, mountpoint: String) {
        self.container = container
        self.mountpoint = mountpoint
    }
}

/// Mounts a container and serves it until it is unmounted (fusermount3 -u, asicfs umount,
/// SIGTERM/SIGINT/SIGHUP). Errors are one line, and `asicfs mount` reports every one of them
/// before it returns (with nothing left mounted). By default the daemon detaches once the mount
/// is ready.
///
/// What a mount needs comes first: the mount point, the settings, the container's lock (so a
/// second mount fails before anything is mounted). The container itself is opened and checked
/// (central directory, names, manifest) on a thread of its own while the mount is already
/// answering: until that check ends, the root folder's attributes are provisional and every
/// other request waits for it (`MountGate`). A container that fails the check takes the mount
/// away again and `asicfs mount` fails with the check's line, exactly as when the check came
/// first. Browse mode checks each container when it is first entered, so it mounts at once.
public enum Mounter {
    public static func run(_ request: MountRequest) throws -> Int32 {
        var request = request
        let containerAsGiven = request.container
        guard let mountpoint = realpath(request.mountpoint, nil) else {
            throw ContainerError.io(path: request.mountpoint, operation: "cannot mount on", errno: errno)
        }
        request.mountpoint = String(cString: mountpoint)
        free(mountpoint)
        try MountRegistry.checkFolder()
        var st = stat()
        guard stat(request.mountpoint, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else {
            throw ContainerError.io(path: request.mountpoint, operation: "cannot mount on", errno: ENOTDIR)
        }
        var containerStatus = stat()
        let browsing = stat(request.container, &containerStatus) == 0 && containerStatus.st_mode & S_IFMT == S_IFDIR
        if browsing && request.createIfMissing {
            throw ContainerError.refused("-o create makes a container, but \(request.container) is a folder (browse mode needs no -o create)")
        }
        // An empty file is made a container too, as `asicfs create` does (`touch x.asice` first is common).
        let emptyFile = containerStatus.st_mode & S_IFMT == S_IFREG && containerStatus.st_size == 0
        // A new encrypted container (.cdoc, .cdoc2) is a folder to fill and seal: nothing is
        // written until it is sealed (the extension tells the format: there are no bytes yet).
        var sealing: EncryptedFormat?
        if request.createIfMissing, access(request.container, F_OK) != 0 || emptyFile {
            sealing = Sealer.format(forNewContainer: request.container)
            if sealing == nil {
                try Container.create(at: request.container, files: [])
                _ = stat(request.container, &containerStatus)
            }
        }
        if sealing != nil {
            let folder = PathText.folder(of: request.container)
            guard let real = realpath(folder.isEmpty ? "." : folder, nil) else {
                throw ContainerError.io(path: folder, operation: "cannot write into", errno: errno)
            }
            request.container = String(cString: real) + "/" + PathText.lastComponent(of: request.container)
            free(real)
            containerStatus.st_mtim = timespec(tv_sec: time(nil), tv_nsec: 0)
        } else {
            guard let containerPath = realpath(request.container, nil) else {
                throw ContainerError.io(path: request.container, operation: "cannot open", errno: errno)
            }
            request.container = String(cString: containerPath)
            free(containerPath)
        }
        try MountPlacement.check(container: request.container, mountpoint: request.mountpoint, browsing: browsing)

        // Trust files the configuration names are read now (a bad path fails the mount); the
        // built-in LOTL signers and the trusted lists only when a signature is first validated
        // or signed, so a mount of an unsigned container never starts OpenSSL: cold, the mount
        // answered in a median 47.1 ms instead of 50.9 (15 mounts each of fsbench's 10k-file
        // container, in turns).
        let environment = try SignatureEnvironment(configuration: request.configuration)
        let gate: MountGate
        var check: (@Sendable () throws -> any MountSource)?
        var browseSource: BrowseFileSystem?
        if browsing {
            let source = try BrowseFileSystem(folder: request.container, readOnly: request.readOnly,
                                              environment: environment, openContainers: request.openContainers)
            browseSource = source
            gate = MountGate(ready: source)
        } else if let sealing {
            let (path, configuration) = (request.container, request.configuration)
            gate = MountGate()
            check = { try SealingMount(containerPath: path, format: sealing, configuration: configuration) }
        } else {
            // The container's folder is held from now on: a folder renamed away (or swapped for a
            // link) on disk never redirects its saves, the lock's path included.
            let folder = try PinnedFolder(holding: request.container)
            let lock = try ContainerLock.acquire(folder.pinned(PathText.lastComponent(of: request.container)),
                                                 shownAs: request.container)
            let (path, readOnly, configuration) = (request.container, request.readOnly, request.configuration)
            gate = MountGate()
            check = {
                TestHooks.holdMountCheck()
                // An encrypted container (.cdoc, .cdoc2: told by content) is a part set of its own.
                if EncryptedMount.isEncrypted(path) { return try EncryptedMount(containerPath: path, configuration: configuration) }
                return try MountRouter(containerPath: path, readOnly: readOnly, environment: environment,
                                       folder: folder, lock: lock)
            }
        }
        let provisionalRoot = NodeAttributes(kind: .directory, size: 0, permissions: request.readOnly ? 0o555 : 0o755,
                                             modified: NodeAttributes(native: containerStatus).modified)

        var options = ["fsname=\(escapeOption(request.container))", "subtype=asicfs", "auto_unmount",
                       "max_read=\(FuseLimits.largestRequest)"]
        if request.readOnly { options.append("ro") }
        // Other users may then look, but the kernel checks the modes we report (0644, ours), so
        // they cannot change the container.
        if request.allowOther { options += ["allow_other", "default_permissions"] }
        options += request.fuseOptions
        let argv = FuseArgv(["asicfs"] + (request.debug ? ["-d"] : []) + ["-o", options.joined(separator: ",")])
        // Kept until the mount ends, as the strings were before.
        defer { withExtendedLifetime(argv) {} }
        var args = argv.args
        reportedModeMask = mode_t(request.umask)
        var ops = fuseOperations()
        let box = MountSourceBox(gate: gate, provisionalRoot: provisionalRoot)
        let retained = Unmanaged.passRetained(box)
        defer { retained.release() }
        guard let fuse = fuse_new(&args, &ops, MemoryLayout<fuse_operations>.size, retained.toOpaque()) else {
            fuse_opt_free_args(&args)
            throw ContainerError.refused("invalid mount options: \(options.joined(separator: ","))")
        }
        fuse_opt_free_args(&args)
        defer { fuse_destroy(fuse) }
        if let notice = request.notice { FileHandle.standardError.write(Data("asicfs: \(PrintableText.escaped(notice))\n".utf8)) }
        guard StandardStreams.whileHelpersStart({ fuse_mount(fuse, request.mountpoint) }) == 0 else {
            throw ContainerError.refused("cannot mount on \(request.mountpoint)")
        }
        // Detach before any thread exists: fork() keeps only the calling thread.
        let verdict: Detach.Verdict?
        if request.foreground {
            chdir("/")
            verdict = nil
        } else {
            do { verdict = try Detach.intoDaemon() } catch {
                fuse_unmount(fuse)
                throw error
            }
        }
        // From here on a detached daemon's stderr is /dev/null: errors go to the system log too.
        SystemLog.enabled = !request.foreground
        let pidFile = MountRegistry.pidFile(for: request.mountpoint)
        MountRegistry.record(pid: getpid(), container: request.container, at: pidFile)
        // Kept when the daemon is killed: `asicfs umount` then knows a daemon ended unsaved.
        defer { unlink(pidFile) }

        let session = fuse_get_session(fuse)
        fuse_set_signal_handlers(session)
        // Browse mode keeps libfuse's readers: its requests reach real files and containers
        // opened on demand, whose waits no rule here foresees.
        if check != nil { FuseReader.install(fuse) }
        let handle = FuseHandle(fuse)
        let start: @Sendable (any MountSource) -> Void = { source in
            source.start { path in invalidateKernelCache(handle.fuse, path) }
        }
        // Signalled when the check thread has done everything (it uses the session until then).
        // It starts at 0 either way: libdispatch traps when a semaphore is disposed of below the
        // value it was made with, which killed every browse daemon at exit (SIGILL).
        let checkEnded = DispatchSemaphore(value: 0)
        if check == nil { checkEnded.signal() }
        if let check {
            let loopThread = pthread_self()
            let thread = Thread {
                defer { checkEnded.signal() }
                do {
                    let source = try check()
                    start(source)
                    gate.open(with: source)
                    // The root's provisional attributes give way to the checked ones.
                    invalidateKernelCache(handle.fuse, "/")
                    verdict?.ready()
                } catch {
                    gate.fail((error as? ContainerError)?.line(naming: containerAsGiven) ?? "\(error)")
                    // Ends the loop as SIGTERM does (the handler libfuse set stops the session).
                    pthread_kill(loopThread, SIGTERM)
                }
            }
            thread.name = "asicfs-check"
            thread.start()
        } else if let browseSource {
            start(browseSource)
            verdict?.ready()
        }
        let loopResult = cfuse_loop_mt(fuse, 0)
        // Before the handlers go: a failed check may still send its SIGTERM.
        checkEnded.wait()
        fuse_remove_signal_handlers(session)
        // Settled by now (the check thread has ended): the source, or why the check failed.
        guard let fileSystem = try? gate.source() else {
            // The check failed (or the mount was taken away while it ran and then it failed).
            fuse_unmount(fuse)
            let line = gate.failure ?? "the container check failed"
            SystemLog.error(line)
            verdict?.failed(line)
            throw MountCheckFailure(description: line)
        }
        let unmounted = FuseReader.endSession(fuse)
        fileSystem.stop()
        fuse_unmount(fuse)
        let failure = fileSystem.close(everyFileClosed: unmounted)
        if let failure { SystemLog.error(failure) }
        // `asicfs umount` waits for us and then reports this (our stderr may be /dev/null); no
        // outcome at all tells it that we died before the save ended.
        MountRegistry.recordOutcome(failure.map { .failed($0) } ?? .saved, for: request.mountpoint)
        // The loop returns the signal number when a signal ended it; that is a clean stop.
        return loopResult < 0 || failure != nil ? 1 : 0
    }

    /// Commas separate mount options, so a comma in a path must be escaped for fsname.
    private static func escapeOption(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ",", with: "\\,")
    }
}

/// The container failed its check after the mount was made: the line `asicfs mount` printed
/// (the CLI prints it as it is, naming the container already).
public struct MountCheckFailure: Error, CustomStringConvertible {
    public let description: String
}

/// fuse_mount starts fusermount3, whose auto_unmount watchdog lives as long as the mount and
/// keeps the standard streams it inherited. Were those our caller's pipes, `$(asicfs mount …)`
/// would never see end-of-file. So while it starts, stdout goes to /dev/null and stderr to an
/// unlinked temporary, whose text (libfuse's reason for a failure) is passed on afterwards.
enum StandardStreams {
    static func whileHelpersStart(_ body: () -> Int32) -> Int32 {
        let savedOut = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)
        let savedError = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3)
        var template = Array("/tmp/asicfs-mount-XXXXXX".utf8CString)
        let capture = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        guard savedOut >= 0, savedError >= 0, capture >= 0, null >= 0 else { return body() }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        dup2(null, STDOUT_FILENO)
        dup2(capture, STDERR_FILENO)
        let result = body()
        dup2(savedOut, STDOUT_FILENO)
        dup2(savedError, STDERR_FILENO)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = pread(capture, &buffer, buffer.count, 0)
        if n > 0 { _ = write(STDERR_FILENO, buffer, n) }
        for fd in [savedOut, savedError, capture, null] { close(fd) }
        return result
    }
}

/// The libfuse instance, shared with the commit thread for cache invalidation (libfuse allows that).
private final class FuseHandle: @unchecked Sendable {
    let fuse: OpaquePointer
    init(_ fuse: OpaquePointer) { self.fuse = fuse }
}

/// Where a running daemon records its PID and container, so `asicfs umount` can wait until it has
/// saved, and where it leaves the outcome of its final save.
public enum MountRegistry {
    static var folder: String {
        "\(PrivateFolder.runtimeDirectory ?? "/tmp")/asicfs-\(getuid())"
    }

    /// Makes the folder of records if needed and checks that it is private to this user
    /// (`PrivateFolder`): its records are trusted only then.
    public static func checkFolder() throws { try PrivateFolder.ensure(folder) }

    public static func pidFile(for mountpoint: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in mountpoint.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "\(folder)/\(String(hash, radix: 16)).pid"
    }

    /// Where a daemon leaves the outcome of its final save, for `asicfs umount` to report.
    public static func outcomeFile(for mountpoint: String) -> String {
        pidFile(for: mountpoint).replacingOccurrences(of: ".pid", with: ".outcome")
    }

    /// What the final save at unmount came to.
    public enum Outcome: Equatable, Sendable {
        case saved
        /// The reason, which says where the unsaved files went.
        case failed(String)
    }

    static func recordOutcome(_ outcome: Outcome, for mountpoint: String) {
        let text: String
        switch outcome {
        case .saved: text = "saved\n"
        case .failed(let reason): text = "failed: " + reason
        }
        try? text.write(toFile: outcomeFile(for: mountpoint), atomically: true, encoding: .utf8)
    }

    /// The outcome a daemon left for `mountpoint` (nil: none, it did not get that far).
    public static func outcome(for mountpoint: String) -> Outcome? {
        guard let text = try? String(contentsOfFile: outcomeFile(for: mountpoint), encoding: .utf8) else { return nil }
        if text == "saved\n" { return .saved }
        return .failed(text.hasPrefix("failed: ") ? String(text.dropFirst(8)) : text)
    }

    public static func forgetOutcome(for mountpoint: String) { unlink(outcomeFile(for: mountpoint)) }

    static func record(pid: Int32, container: String, at file: String) {
        // Checked before the mount was made (`Mounter.run`).
        guard (try? checkFolder()) != nil else { return }
        try? "\(pid)\n\(container)\n".write(toFile: file, atomically: true, encoding: .utf8)
    }

    /// The daemon that serves (or served) a mountpoint: its PID and container.
    public struct Daemon: Sendable {
        public let pid: Int32
        public let container: String
        /// Still there, and still asicfs (a PID left in a stale record may belong to another program by now).
        public var isRunning: Bool {
            guard MountRegistry.isRunning(pid),
                  let command = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")) else { return false }
            let program = command.split(separator: 0).first.map { String(decoding: $0, as: UTF8.self) } ?? ""
            return PathText.lastComponent(of: program).hasPrefix("asicfs")
        }
        /// Stopped by a signal (SIGSTOP, a debugger): it cannot save until continued.
        public var isStopped: Bool { MountRegistry.state(of: pid).map { $0 == "T" || $0 == "t" } ?? false }
    }

    /// The daemon recorded for `mountpoint`, running or not (a killed one leaves its record).
    public static func daemon(for mountpoint: String) -> Daemon? {
        guard let text = try? String(contentsOfFile: pidFile(for: mountpoint), encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let pid = lines.first.flatMap({ Int32($0) }) else { return nil }
        return Daemon(pid: pid, container: lines.count > 1 ? String(lines[1]) : "")
    }

    /// Removes the record of a daemon that is gone.
    public static func forgetDaemon(for mountpoint: String) { unlink(pidFile(for: mountpoint)) }

    /// True while the process exists and is not a zombie.
    public static func isRunning(_ pid: Int32) -> Bool {
        guard let state = state(of: pid) else { return false }
        return state != "Z" && state != "X"
    }

    /// The state letter /proc gives for a process (R, S, D, T, Z, ...), nil if there is none.
    static func state(of pid: Int32) -> Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")"), stat.distance(from: close, to: stat.endIndex) > 2 else { return nil }
        return stat[stat.index(close, offsetBy: 2)]
    }
}

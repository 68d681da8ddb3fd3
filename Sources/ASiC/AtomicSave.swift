import Foundation

/// Replaces a file atomically: write a temporary beside it, fsync, rename over it, fsync the
/// folder. Readers see the old file or the new one, never a mix; a failure at any point (disk
/// full, permission denied, a kill) leaves the original byte-identical.
public enum AtomicSave {
    /// Runs `body` on a fresh temporary next to `path` and, if it succeeds, puts it in place.
    /// The new file keeps the original's permissions (and owner, where allowed). Returns the
    /// new file's identity, so a caller reopening `path` can tell it got that very file.
    @discardableResult
    static func replace(_ path: String, body: (PosixFile) throws -> Void) throws -> FileIdentity {
        let target = resolvedTarget(path)
        let folder = PathText.folder(of: target)
        // A container name near NAME_MAX is cut short in the temporary's name (it only has to be
        // recognisable); the pid and the random part keep it unique and unpredictable.
        let base = PathText.shortened(PathText.lastComponent(of: target), leavingRoomFor: temporaryAddedLength)
        removeStaleTemporaries(in: folder, base: base)

        var original = stat()
        let exists = stat(target, &original) == 0
        let temporaryPath = "\(folder)/\(temporaryName(base: base, pid: getpid(), random: UInt32.random(in: 0...UInt32.max)))"
        let temporary: PosixFile
        let identity: FileIdentity
        do {
            temporary = try PosixFile.createExclusive(temporaryPath)
        } catch ContainerError.io(_, _, let code) {
            // Name the container, not our temporary, in the message.
            throw ContainerError.io(path: target, operation: "cannot save", errno: code)
        }
        do {
            do {
                try body(temporary)
            } catch ContainerError.io(let path, let operation, let code) where path == temporaryPath {
                // Name the container, not our temporary, in the message.
                throw ContainerError.io(path: target, operation: operation == "cannot write" ? "cannot save" : operation, errno: code)
            }
            let mode = exists ? original.st_mode & 0o7777 : 0o666 & ~currentUmask()
            // Only root can give the file back to another owner; elsewhere it is ours already.
            if exists, getuid() == 0 { _ = fchown(temporary.fd, original.st_uid, original.st_gid) }
            guard fchmod(temporary.fd, mode) == 0 else {
                throw ContainerError.io(path: target, operation: "cannot keep the permissions of", errno: errno)
            }
            try temporary.sync()
            identity = FileIdentity(try temporary.status())
            // A held ContainerLock follows the container to its new file.
            let lockMove = ContainerLock.moveLock(of: target, to: temporary)
            guard rename(temporaryPath, target) == 0 else {
                let code = errno
                lockMove?.abandon()
                throw ContainerError.io(path: target, operation: "cannot replace", errno: code)
            }
            lockMove?.finish()
        } catch {
            unlink(temporaryPath)
            throw error
        }
        syncFolder(folder)
        return identity
    }

    /// The temporary a save writes beside the file `base`: `.BASE.asicfs-PID-RANDOM.tmp`.
    static func temporaryName(base: String, pid: Int32, random: UInt32) -> String { ".\(base).asicfs-\(pid)-\(random).tmp" }

    /// Whether a name is one of these temporaries (a folder listing leaves them out).
    public static func isTemporaryName(_ name: String) -> Bool {
        guard name.hasPrefix("."), name.hasSuffix(".tmp"), let marker = name.range(of: ".asicfs-", options: .backwards) else {
            return false
        }
        let numbers = name[marker.upperBound...].dropLast(4).split(separator: "-", omittingEmptySubsequences: false)
        return numbers.count == 2 && numbers.allSatisfy { !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }
    }

    /// What a temporary's name adds to the container's: "." + ".asicfs-" + pid (up to 10 digits)
    /// + "-" + a random UInt32 (up to 10 digits) + ".tmp".
    private static let temporaryAddedLength = 1 + 8 + 10 + 1 + 10 + 4

    /// Follows a symbolic link so that saving replaces the file it points to, not the link. A
    /// path through a held folder's descriptor (`/proc/self/fd/N/NAME`, the file system's
    /// PinnedFolder) is kept as it is: resolved, it would name the folder by its current path,
    /// which another user may swap for a link before the save renames.
    static func resolvedTarget(_ path: String) -> String {
        if path.hasPrefix("/proc/self/fd/") { return path }
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func syncFolder(_ folder: String) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    private static func currentUmask() -> mode_t {
        let mask = umask(0o022)
        umask(mask)
        return mask
    }

    /// A process killed mid-save leaves its temporary behind; remove those whose writer is gone.
    private static func removeStaleTemporaries(in folder: String, base: String) {
        let prefix = ".\(base).asicfs-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            let rest = name.dropFirst(prefix.count)
            guard let pid = rest.split(separator: "-").first.flatMap({ Int32($0) }) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink("\(folder)/\(name)") }
        }
    }
}

/// Which file a path named at some moment: device and inode.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}

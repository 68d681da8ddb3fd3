import ASiC
import CLinux
import Foundation

/// The folder that holds an open container, held by an O_PATH descriptor for as long as the
/// container is open. The container core takes paths, so it is given `/proc/self/fd/N/NAME`:
/// the kernel resolves `/proc/self/fd/N` to this very folder, wherever it is now, so saves
/// (temporary, rename), the spool folder and the rescue at unmount all land in it. Another user
/// who renames the folder away and puts a link (or a folder of theirs) under its old name
/// cannot redirect the daemon's writes, which run as root under fstab, into another folder;
/// the container is saved where it now is.
public final class PinnedFolder: @unchecked Sendable {
    /// The folder's path when it was pinned (for messages).
    let shownPath: String
    private let descriptor: Int32
    private let identity: (device: UInt64, inode: UInt64)
    /// The folder as the container core reaches it: through the descriptor.
    let pinnedPath: String
    private let movedReported = NSLock()
    private var movedWasReported = false

    /// Takes over `descriptor` (an O_PATH or O_DIRECTORY descriptor of the folder at `shownPath`).
    init(descriptor: Int32, shownPath: String) throws {
        var st = stat()
        guard fstat(descriptor, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else {
            let code = errno == 0 ? ENOTDIR : errno
            close(descriptor)
            throw FileSystemError(code, "cannot hold the folder \(shownPath)")
        }
        self.descriptor = descriptor
        self.shownPath = shownPath
        identity = (UInt64(st.st_dev), UInt64(st.st_ino))
        pinnedPath = "/proc/self/fd/\(descriptor)"
    }

    /// Pins the folder that holds `container` (links on the way followed, as the caller already
    /// resolved them: a single mount's container path is a real path).
    convenience init(holding container: String) throws {
        let folder = PathText.folder(of: container)
        let fd = open(folder, clinux_o_path() | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ContainerError.io(path: folder, operation: "cannot open", errno: errno) }
        try self.init(descriptor: fd, shownPath: folder)
    }

    deinit { close(descriptor) }

    /// `name` in this folder, reached through the descriptor.
    func pinned(_ name: String) -> String { "\(pinnedPath)/\(name)" }

    /// `text` (a message) with the descriptor's path replaced by the folder's shown path (where
    /// no digit follows: /proc/self/fd/1 is not /proc/self/fd/12).
    func shown(_ text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let found = rest.range(of: pinnedPath) {
            let followedByDigit = rest[found.upperBound...].first?.isNumber == true
            result += rest[..<found.lowerBound] + (followedByDigit ? pinnedPath : shownPath)
            rest = rest[found.upperBound...]
        }
        return result + rest
    }

    /// Whether the shown path still leads to this folder.
    var isStillAtPath: Bool {
        var st = stat()
        return stat(shownPath, &st) == 0 && (UInt64(st.st_dev), UInt64(st.st_ino)) == identity
    }

    /// Where the folder is now, as the kernel names it (for a message; nil when unknown).
    var currentPath: String? { try? FileManager.default.destinationOfSymbolicLink(atPath: pinnedPath) }

    /// Reports, once, that the folder left its path while the container was open: the user
    /// finds the container, and what was saved in it, where the folder went.
    func reportIfMoved(container name: String) {
        guard !isStillAtPath else { return }
        let first = movedReported.withLock { () -> Bool in
            defer { movedWasReported = true }
            return !movedWasReported
        }
        guard first else { return }
        let now = currentPath.map { "now \($0)" } ?? "its new place is unknown"
        SystemLog.report("the folder of \(shownPath)/\(name) was moved or replaced on disk while the container was open; "
            + "it is saved in the folder it was opened in (\(now)), not in what is at \(shownPath) now")
    }
}

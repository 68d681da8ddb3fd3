import ASiC
import Foundation

/// Where a mount may not go: over the folder that holds its own container (or above it), and,
/// in browse mode, inside the folder it shows. The daemon reaches the container by its path; a
/// mount there puts the daemon's own mount in that path, and its first request waits for an
/// answer only it could give: the daemon and everything touching the path hung for good.
/// Compared by device and inode along the real path, so another name for a folder (a symlink,
/// a bind mount of the same tree) is no way around it.
public enum MountPlacement {
    /// Refuses, in one line, a mount point where the mount would hide what it serves.
    /// `container` and `mountpoint` are real paths (realpath).
    public static func check(container: String, mountpoint: String, browsing: Bool) throws {
        let folder = browsing ? container : PathText.folder(of: container)
        if isAtOrBelow(folder, mountpoint) {
            throw ContainerError.refused("cannot mount on \(mountpoint): it holds \(container), which the mount would hide "
                                         + "from its own daemon; choose a mount point outside \(folder)")
        }
        if browsing && isAtOrBelow(mountpoint, folder) {
            throw ContainerError.refused("cannot mount on \(mountpoint): it is inside \(folder), the folder the mount shows; "
                                         + "choose a mount point outside it")
        }
    }

    /// True when `path` is `ancestor` or a folder below it: some folder from `path` up to `/` is
    /// `ancestor` itself.
    static func isAtOrBelow(_ path: String, _ ancestor: String) -> Bool {
        guard let wanted = identity(ancestor) else { return false }
        var current = path
        while true {
            if let found = identity(current), found == wanted { return true }
            if current == "/" || current.isEmpty { return false }
            current = PathText.parent(of: current)
        }
    }

    private struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64
    }

    private static func identity(_ path: String) -> Identity? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Identity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }
}

import ASiC
import FS
import Foundation

/// A mount point must be an empty folder that nothing is mounted on, as fuse-zip and sshfs
/// require: a mount over files hides them (a user who mistypes the folder no longer sees their
/// work), and a second mount on a used mount point hides the first. `-o nonempty` allows both.
enum MountPointCheck {
    static let option = "nonempty"

    /// The mount's own placement rule (`MountPlacement`), said before the emptiness rule: a
    /// mount point above the container is never empty, and that is not the mistake to name.
    static func refuseHidingItsOwnContainer(_ container: String, _ mountpoint: String) throws {
        guard let containerPath = realpath(container, nil) else { return }
        defer { free(containerPath) }
        guard let mountPath = realpath(mountpoint, nil) else { return }
        defer { free(mountPath) }
        var isFolder: ObjCBool = false
        let path = String(cString: containerPath)
        _ = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
        try MountPlacement.check(container: path, mountpoint: String(cString: mountPath), browsing: isFolder.boolValue)
    }

    static func requireUnused(_ mountpoint: String) throws {
        // Anything else (missing, not a folder) is said by the mount itself.
        guard let resolved = realpath(mountpoint, nil) else { return }
        let path = String(cString: resolved)
        free(resolved)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else { return }
        if Unmount.isMounted(path) {
            throw MountFailure("cannot mount on \(path): something is mounted there already "
                + "(unmount it first, or -o nonempty to mount over it)")
        }
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: path), !entries.isEmpty {
            throw MountFailure("cannot mount on \(path): the folder is not empty "
                + "(a mount would hide its files; use an empty folder, or -o nonempty)")
        }
    }
}

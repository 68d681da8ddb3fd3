import ASiC
import Foundation

/// A folder of this user's that no one else may have a say in: where `asicfs open` makes mount
/// points and daemons keep their pid and outcome files. Without XDG_RUNTIME_DIR it is a fixed
/// name in /tmp, which another user can make first (a symlink to a folder of theirs, a folder
/// they own): then mounts would land where they choose and records could be forged. So, as
/// OpenSSH and tmux do, the folder is made with mode 0700 and used only when it is a real folder
/// (not followed if a symlink), owned by this user, with no permission bits for group or others.
public enum PrivateFolder {
    /// XDG_RUNTIME_DIR, when set: the session's own folder, which only its user can use.
    public static var runtimeDirectory: String? {
        ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Makes `path` if it is not there (and the folders above it when it is inside
    /// XDG_RUNTIME_DIR, which is trusted as it is), and returns it once it has checked it as above.
    @discardableResult
    public static func ensure(_ path: String) throws -> String {
        if let runtime = runtimeDirectory, path.hasPrefix(runtime + "/"), access(PathText.parent(of: path), F_OK) != 0 {
            try? FileManager.default.createDirectory(atPath: PathText.parent(of: path), withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o700])
        }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw ContainerError.io(path: path, operation: "cannot make the folder", errno: errno)
        }
        var st = stat()
        guard lstat(path, &st) == 0 else { throw ContainerError.io(path: path, operation: "cannot use", errno: errno) }
        let problem: String?
        if st.st_mode & S_IFMT == S_IFLNK {
            problem = "it is a symbolic link"
        } else if st.st_mode & S_IFMT != S_IFDIR {
            problem = "it is not a folder"
        } else if st.st_uid != getuid() {
            problem = "it belongs to user \(st.st_uid)"
        } else if st.st_mode & 0o077 != 0 {
            problem = "others may use it (mode \(String(st.st_mode & 0o7777, radix: 8)))"
        } else {
            problem = nil
        }
        if let problem {
            throw ContainerError.refused("\(path) is not private to you (\(problem)); asicfs keeps its mount points and "
                                         + "daemon records there: remove it, or set XDG_RUNTIME_DIR")
        }
        return path
    }
}

import ASiC
import Foundation

/// A container whose owner may not write it (`chmod 444`, `chmod a-w`) is not rewritten by the
/// edit commands without --force, as zip refuses such an archive: the atomic save replaces the
/// file through its folder, so the mode alone would not stop it (nor would anything stop root).
enum WriteProtection {
    static let forceOption = OptionSpec(names: ["--force"], takesValue: false,
                                        help: "change a write-protected container (chmod a-w) all the same")

    static func check(_ path: String, force: Bool) throws {
        var status = stat()
        guard !force, stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_mode & S_IWUSR == 0 else { return }
        throw ContainerError.refused("the container is write-protected (mode 0\(String(status.st_mode & 0o7777, radix: 8))): "
            + "make it writable (chmod u+w) or give --force to change it all the same")
    }
}

import Foundation

/// Why the data files of a container may not change now: the one rule the command line's edits
/// (`ContainerEdit`) and a mount's data files (`DataFiles`) both follow. A signature covers the
/// data files, and an ASiC-S container's single data file is time-stamped; a mount adds its own
/// two reasons (mounted read-only, a signing or signature removal holding it).
public enum DataFileFreeze: Equatable, Sendable {
    case readOnlyMount
    /// Something holds the mount ("a pkcs12 signing is running").
    case claimed(String)
    case asicS
    /// Signed, with this many signature files.
    case signed(Int)

    /// What keeps `container`'s data files from changing now, if anything; the mount's reasons first.
    public static func of(_ container: Container, readOnlyMount: Bool = false, claimedBy activity: String? = nil) -> DataFileFreeze? {
        if readOnlyMount { return .readOnlyMount }
        if let activity { return .claimed(activity) }
        if container.kind == .asicS { return .asicS }
        if container.isSigned { return .signed(container.signatureFiles.count) }
        return nil
    }

    /// The errno a mount answers with.
    public var code: Int32 {
        switch self {
        case .readOnlyMount: return EROFS
        case .claimed: return EBUSY
        case .asicS, .signed: return EPERM
        }
    }

    /// The command line's sentence (it names the container in front).
    public var reason: String {
        switch self {
        case .readOnlyMount: return "the container is mounted read-only (-o ro)"
        case .claimed(let activity): return "\(activity); data files cannot change until it ends"
        case .asicS: return "this is an ASiC-S container: its single data file is time-stamped and cannot be changed"
        case .signed(let count):
            return "the container is signed (\(count) signature file\(count == 1 ? "" : "s")); changing its data files would "
                + "break the signatures. Copy the files into a new container to change them"
        }
    }

    /// A mount's sentence for a refused change ("cannot create 'a.txt': ...").
    public func refusing(_ action: String) -> String {
        switch self {
        case .readOnlyMount: return "cannot \(action): the container is mounted read-only (-o ro)"
        case .claimed(let activity):
            return "cannot \(action): \(activity); data files cannot change until it ends (see .asicfs/status/current)"
        case .asicS: return "cannot \(action): this is an ASiC-S container, whose single data file is time-stamped"
        case .signed(let count):
            return "cannot \(action): the container is signed (\(count) signature file\(count == 1 ? "" : "s")) and changing "
                + "its data files would break the signatures; copy the files into a new container to change them"
        }
    }
}

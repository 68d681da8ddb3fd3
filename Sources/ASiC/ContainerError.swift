import Foundation

/// Every way the container core can fail, each with one human sentence.
/// The filesystem maps these to errno; the command line prints `description`.
public enum ContainerError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The file is not a ZIP archive or its ZIP structure is damaged.
    case corruptZip(String)
    /// The ZIP is fine but breaks an ASiC rule (mimetype, manifest, names).
    case notASiC(String)
    /// An entry name is unsafe or not allowed.
    case invalidName(String, reason: String)
    /// An XML document inside the container was refused.
    case invalidXML(String, reason: String)
    /// Real data differs from what the ZIP declares (CRC, size: a zip bomb or damage).
    case dataMismatch(String, reason: String)
    /// Something the container does not support (encryption, other compression methods).
    case unsupported(String)
    /// A change was refused (signed container, duplicate or missing name).
    case refused(String)
    /// No data file of that name.
    case noSuchFile(String)
    /// A path that had to be a regular file is something else (a FIFO, a device).
    case notRegularFile(String)
    /// An operating-system call failed.
    case io(path: String, operation: String, errno: Int32)

    /// One line: names and paths from a container or the user are shown escaped (`PrintableText`).
    public var description: String { PrintableText.escaped(sentence) }

    /// The line the command line prints: it names the container (as the user gave it) unless
    /// the sentence is about a path already.
    public func line(naming container: String?) -> String {
        switch self {
        case .io, .notRegularFile: return description
        default: return (container.map { "\($0): " } ?? "") + description
        }
    }

    private var sentence: String {
        switch self {
        case .corruptZip(let why): return "not a valid ZIP file: \(why)"
        case .notASiC(let why): return "not a valid ASiC container: \(why)"
        case .invalidName(let name, let reason): return "entry name '\(name)' is not allowed: \(reason)"
        case .invalidXML(let name, let reason): return "\(name) was refused: \(reason)"
        case .dataMismatch(let name, let reason): return "data of '\(name)' is damaged: \(reason)"
        case .unsupported(let why): return "unsupported: \(why)"
        case .refused(let why): return why
        case .noSuchFile(let name): return "no data file named '\(name)' in the container"
        case .notRegularFile(let path): return "\(path) is not a regular file"
        case .io(let path, let operation, let code):
            let text = String(cString: strerror(code))
            return "\(operation) \(path): \(text)"
        }
    }

    /// The errno a filesystem should report for this error.
    public var errno: Int32 {
        switch self {
        case .io(_, _, let code): return code
        case .noSuchFile: return ENOENT
        case .refused: return EPERM
        case .invalidName, .notRegularFile: return EINVAL
        case .unsupported: return EOPNOTSUPP
        case .corruptZip, .notASiC, .invalidXML, .dataMismatch: return EIO
        }
    }
}

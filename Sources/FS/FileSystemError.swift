import ASiC
import Foundation

/// The one error type that crosses the FUSE boundary: an errno, plus the sentence that goes to
/// `.asicfs/status/last-error` when the user should learn why.
public struct FileSystemError: Error, CustomStringConvertible {
    public let code: Int32
    public let message: String?

    public init(_ code: Int32, _ message: String? = nil) {
        self.code = code
        self.message = message
    }

    public var description: String { message ?? String(cString: strerror(code)) }

    /// Maps any error from the core to an errno (the only place this mapping happens).
    static func from(_ error: Error) -> FileSystemError {
        switch error {
        case let error as FileSystemError: return error
        case let error as ContainerError: return FileSystemError(error.errno, error.description)
        default: return FileSystemError(EIO, "\(error)")
        }
    }
}

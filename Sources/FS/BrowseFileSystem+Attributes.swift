import CLinux
import Foundation

/// Extended attributes in a browse mount: a container's folder has the status attributes of a
/// single mount's root (its container is opened for them); real files and folders show their
/// own, read-only (setting one is ENOTSUP everywhere in asicfs).
extension BrowseFileSystem {
    public func extendedAttributeNames(_ path: String) throws -> [String] {
        try withPlace(path) { place in
            switch place {
            case .plain(let relative): return try folder.extendedAttributeNames(relative)
            case .child(let child, let inner): return try child.fileSystem.extendedAttributeNames(inner)
            case .container, .newContainer: return []
            }
        }
    }

    public func extendedAttribute(_ path: String, name: String) throws -> [UInt8] {
        try withPlace(path) { place in
            switch place {
            case .plain(let relative): return try folder.extendedAttribute(relative, name: name)
            case .child(let child, let inner):
                // ENODATA, not the single mount's EOPNOTSUPP: `ls -lR` stops asking a whole mount
                // after one EOPNOTSUPP, and the real files beside a container may have ACLs.
                do {
                    return try child.fileSystem.extendedAttribute(inner, name: name)
                } catch let error as FileSystemError where error.code == EOPNOTSUPP {
                    throw FileSystemError(ENODATA)
                }
            case .container, .newContainer: throw FileSystemError(ENODATA)
            }
        }
    }
}

extension PassThroughFolder {
    /// llistxattr of the real file: its attribute names.
    func extendedAttributeNames(_ relative: String) throws -> [String] {
        let target = full(relative)
        let size = llistxattr(target, nil, 0)
        guard size >= 0 else { throw FileSystemError(errno) }
        guard size > 0 else { return [] }
        var buffer = [CChar](repeating: 0, count: size)
        let got = llistxattr(target, &buffer, size)
        guard got >= 0 else { throw FileSystemError(errno) }
        return buffer.prefix(got).split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    }

    /// lgetxattr of the real file (ENODATA when it has no such attribute).
    func extendedAttribute(_ relative: String, name: String) throws -> [UInt8] {
        let target = full(relative)
        let size = lgetxattr(target, name, nil, 0)
        guard size >= 0 else { throw FileSystemError(errno) }
        var buffer = [UInt8](repeating: 0, count: size)
        let got = lgetxattr(target, name, &buffer, size)
        guard got >= 0 else { throw FileSystemError(errno) }
        return Array(buffer.prefix(got))
    }
}

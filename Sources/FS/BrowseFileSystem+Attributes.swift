import CLinux
import Foundation

/// Extended attributes in a browse mount: a container's folder has the status attributes of a
/// single mount's root (its container is opened for them). Real files and folders pass theirs
/// through (reading, setting, removing, so ACLs too), except:
/// - `user.asicfs.*` is never passed through: only a container asicfs opened and validated
///   itself carries a status, so a real folder named `x.asice` with a hand-set (or `cp -a`'d)
///   `user.asicfs.status=VALID` shows nothing, and setting one is EPERM;
/// - another user (allow_other) can set or remove only `user.*` and POSIX ACLs, and does not
///   see `trusted.*`: taking their fsuid drops the daemon's file capabilities, not
///   CAP_SETFCAP (`security.capability`) or CAP_SYS_ADMIN (`trusted.*`).
extension BrowseFileSystem {
    static let ownAttributePrefix = "user.asicfs."

    /// Whether a real file's attribute `name` may be shown to (or changed by) this request's caller.
    static func passesThrough(_ name: String, changing: Bool) -> Bool {
        if name.hasPrefix(ownAttributePrefix) { return false }
        guard CallerRights.foreignCaller != nil else { return true }
        if changing { return name.hasPrefix("user.") || name.hasPrefix("system.posix_acl_") }
        return !name.hasPrefix("trusted.")
    }

    public func extendedAttributeNames(_ path: String) throws -> [String] {
        try withPlace(path) { place in
            switch place {
            case .plain(let relative):
                return try folder.extendedAttributeNames(relative).filter { Self.passesThrough($0, changing: false) }
            case .child(let child, let inner): return try child.router.extendedAttributeNames(inner)
            case .container, .newContainer: return []
            }
        }
    }

    public func extendedAttribute(_ path: String, name: String) throws -> [UInt8] {
        try withPlace(path) { place in
            switch place {
            case .plain(let relative):
                guard Self.passesThrough(name, changing: false) else { throw FileSystemError(ENODATA) }
                return try folder.extendedAttribute(relative, name: name)
            case .child(let child, let inner):
                // ENODATA, not the single mount's EOPNOTSUPP: `ls -lR` stops asking a whole mount
                // after one EOPNOTSUPP, and the real files beside a container may have ACLs.
                do {
                    return try child.router.extendedAttribute(inner, name: name)
                } catch let error as FileSystemError where error.code == EOPNOTSUPP {
                    throw FileSystemError(ENODATA)
                }
            case .container, .newContainer: throw FileSystemError(ENODATA)
            }
        }
    }

    public func setExtendedAttribute(_ path: String, name: String, value: [UInt8], flags: Int32) throws {
        try withPlace(path, enter: false) { place in
            switch place {
            case .plain(let relative):
                guard Self.passesThrough(name, changing: true) else { throw FileSystemError(EPERM) }
                if readOnly { throw FileSystemError(EROFS) }
                try folder.setExtendedAttribute(relative, name: name, value: value, flags: flags)
            case .child(let child, let inner) where inner != "/":
                try child.router.setExtendedAttribute(inner, name: name, value: value, flags: flags)
            case .child, .container, .newContainer:
                throw FileSystemError(ENOTSUP)
            }
        }
    }

    public func removeExtendedAttribute(_ path: String, name: String) throws {
        try withPlace(path, enter: false) { place in
            switch place {
            case .plain(let relative):
                guard Self.passesThrough(name, changing: true) else { throw FileSystemError(EPERM) }
                if readOnly { throw FileSystemError(EROFS) }
                try folder.removeExtendedAttribute(relative, name: name)
            case .child(let child, let inner) where inner != "/":
                try child.router.removeExtendedAttribute(inner, name: name)
            case .child, .container, .newContainer:
                throw FileSystemError(ENOTSUP)
            }
        }
    }
}

/// The l*xattr calls on the last component, through /proc/self/fd/N of the folder that holds
/// it (there are no *at() forms before Linux 6.13): N is that folder itself, opened without
/// following a link, and the l* calls do not follow the last component.
extension PassThroughFolder {
    private func attributePath(_ parent: Int32, _ name: String) -> String { "/proc/self/fd/\(parent)/\(name)" }

    func extendedAttributeNames(_ relative: String) throws -> [String] {
        try asCaller(relative) { parent, name in
            let target = attributePath(parent, name)
            let size = try check(llistxattr(target, nil, 0))
            guard size > 0 else { return [] }
            var buffer = [CChar](repeating: 0, count: size)
            let got = try check(llistxattr(target, &buffer, size))
            return buffer.prefix(got).split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        }
    }

    /// ENODATA when the file has no such attribute.
    func extendedAttribute(_ relative: String, name attribute: String) throws -> [UInt8] {
        try asCaller(relative) { parent, name in
            let target = attributePath(parent, name)
            let size = try check(lgetxattr(target, attribute, nil, 0))
            var buffer = [UInt8](repeating: 0, count: size)
            let got = try check(lgetxattr(target, attribute, &buffer, size))
            return Array(buffer.prefix(got))
        }
    }

    func setExtendedAttribute(_ relative: String, name attribute: String, value: [UInt8], flags: Int32) throws {
        try asCaller(relative) { parent, name in
            try check(lsetxattr(attributePath(parent, name), attribute, value, value.count, flags))
        }
    }

    func removeExtendedAttribute(_ relative: String, name attribute: String) throws {
        try asCaller(relative) { parent, name in try check(lremovexattr(attributePath(parent, name), attribute)) }
    }
}

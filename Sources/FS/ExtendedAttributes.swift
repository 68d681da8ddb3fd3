import ASiC
import Foundation
import Validation

/// Signature status where file managers look: extended attributes on the mount's root folder.
/// `user.asicfs.status` is the container's verdict (VALID, VALID_WITH_WARNINGS, INDETERMINATE,
/// INVALID) or `unsigned`; `user.asicfs.signers` the signers' names, "; " between them. Every
/// node answers `listxattr` (most with nothing), an attribute that is not there is ENODATA, and
/// setting or removing one is ENOTSUP, so `cp -a` and `rsync -aX` out of a mount go through.
extension ContainerFileSystem {
    static let statusAttribute = "user.asicfs.status"
    static let signersAttribute = "user.asicfs.signers"

    /// The attribute names of `path` (which must exist).
    public func extendedAttributeNames(_ path: String) throws -> [String] {
        _ = try attributes(path)
        return path == "/" ? [Self.statusAttribute, Self.signersAttribute] : []
    }

    /// One attribute's value; ENODATA when `path` has no such attribute.
    public func extendedAttribute(_ path: String, name: String) throws -> [UInt8] {
        guard try extendedAttributeNames(path).contains(name) else { throw FileSystemError(ENODATA) }
        let report = control.currentReport()
        switch name {
        case Self.statusAttribute:
            return Array((report.map { $0.signatures.isEmpty ? "unsigned" : $0.verdict.rawValue } ?? "unsigned").utf8)
        default:
            return Array((report?.signatures.compactMap(\.signerName).joined(separator: "; ") ?? "").utf8)
        }
    }
}

extension ControlFolder {
    /// The validation report of the current snapshot (validated now if it was not yet); nil for
    /// a container without signatures, which needs none.
    func currentReport() -> ContainerReport? {
        let (generation, snapshot, list) = signatureList()
        guard !list.isEmpty else { return nil }
        return validationReport(for: snapshot, generation: generation)
    }
}

import ASiC
import Foundation
import Validation

/// Signature status where file managers look: extended attributes on the mount's root folder.
/// `user.asicfs.status` is the container's verdict (VALID, VALID_WITH_WARNINGS, INDETERMINATE,
/// INVALID), `unsigned`, or `checking` while the validation runs in the background (a getxattr
/// never waits: file managers ask every folder they show); `user.asicfs.signers` the signers'
/// names, "; " between them. Every node answers `listxattr` (most with nothing), a `user.`
/// attribute that is not there is ENODATA, and setting or removing one is ENOTSUP, so `cp -a`
/// and `rsync -aX` out of a mount go through.
///
/// Any other namespace is EOPNOTSUPP: a container keeps no security labels (`security.*`) and
/// no POSIX ACLs (`system.posix_acl_*`), and that is how a filesystem without them answers.
/// It also matters for speed: `ls -l` asks every file for both, and after one EOPNOTSUPP it
/// stops asking on this mount, where ENODATA cost two requests per file (20,000 for fsbench's
/// 10,000-file container, most of its first `ls -l`).
extension MountRouter {
    static let statusAttribute = "user.asicfs.status"
    static let signersAttribute = "user.asicfs.signers"

    /// The attribute names of `path` (which must exist).
    func extendedAttributeNames(_ path: String) throws -> [String] {
        _ = try attributes(path)
        return path == "/" ? [Self.statusAttribute, Self.signersAttribute] : []
    }

    /// One attribute's value; ENODATA when `path` has no such `user.` attribute, EOPNOTSUPP for
    /// the namespaces a container does not keep.
    func extendedAttribute(_ path: String, name: String) throws -> [UInt8] {
        let names = try extendedAttributeNames(path)
        guard name.hasPrefix("user.") else { throw FileSystemError(EOPNOTSUPP) }
        guard names.contains(name) else { throw FileSystemError(ENODATA) }
        let (generation, snapshot, list) = control.signatureList()
        switch name {
        case Self.statusAttribute:
            // Never waits for validation (it may download a trusted list): "checking" until known.
            guard !list.isEmpty else { return Array("unsigned".utf8) }
            let report = control.validationReportIfReady(for: snapshot, generation: generation)
            return Array((report.map { $0.signatures.isEmpty ? "unsigned" : $0.verdict.rawValue } ?? Self.checking).utf8)
        default:
            // The names in the signers' certificates: known without validating.
            return Array(list.filter { $0.certificate != nil }.map(\.signerName).joined(separator: "; ").utf8)
        }
    }

    /// `user.asicfs.status` while the signatures are being validated.
    static let checking = "checking"
}

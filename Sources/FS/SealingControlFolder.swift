import ASiC
import Foundation

/// The `.asicfs` folder of a folder being sealed into an encrypted container: help, the
/// recipients (written: certificates or a password request; read: the list so far), `seal`
/// (writing `seal` writes the container), and the state. Each write to `recipients` or `seal`
/// is taken at once: a bad one fails that write (EINVAL) and `status/last-error` says why.
final class SealingControlFolder: MountPart, @unchecked Sendable {
    private let sealer: Sealer
    private let errors: LastError
    private let mountedAt: Date
    /// Tells the mount that the folder has become read-only (the kernel's cached modes go).
    var sealed: (() -> Void)?

    init(sealer: Sealer, errors: LastError, mountedAt: Date) {
        self.sealer = sealer
        self.errors = errors
        self.mountedAt = mountedAt
    }

    private enum Node: Equatable { case root, statusFolder, readme, recipients, seal, current, lastError }

    private func resolve(_ name: String) throws -> Node {
        switch name {
        case "": .root
        case "README": .readme
        case "recipients": .recipients
        case "seal": .seal
        case "status": .statusFolder
        case "status/current": .current
        case "status/last-error": .lastError
        default: throw FileSystemError(ENOENT)
        }
    }

    private func content(_ node: Node) -> [UInt8] {
        switch node {
        case .readme: Array(Self.readme.utf8)
        case .recipients: Array(sealer.recipientsText.utf8)
        case .current: Array(sealer.statusText.utf8)
        case .lastError: errors.text.isEmpty ? [] : Array((PrintableText.escaped(errors.text) + "\n").utf8)
        case .seal, .root, .statusFolder: []
        }
    }

    private final class OpenFile {
        let node: Node
        let bytes: [UInt8]
        init(node: Node, bytes: [UInt8]) {
            self.node = node
            self.bytes = bytes
        }
    }

    func attributes(_ name: String) throws -> NodeAttributes {
        let node = try resolve(name)
        switch node {
        case .root, .statusFolder: return .directory(0o555, mountedAt)
        case .recipients, .seal: return NodeAttributes(kind: .file, size: 0, permissions: sealer.isSealed ? 0o444 : 0o644, modified: mountedAt, isDynamic: true)
        case .readme: return NodeAttributes(kind: .file, size: Int64(content(node).count), permissions: 0o444, modified: mountedAt, isDynamic: true)
        // Changing content: no size; reads are direct_io and go to the end.
        case .current, .lastError: return NodeAttributes(kind: .file, size: 0, permissions: 0o444, modified: mountedAt, isDynamic: true)
        }
    }

    func attributes(of file: AnyObject) throws -> NodeAttributes {
        guard let open = file as? OpenFile else { throw FileSystemError(EBADF) }
        return try attributes(name(of: open.node))
    }

    private func name(of node: Node) -> String {
        switch node {
        case .readme: "README"
        case .recipients: "recipients"
        case .seal: "seal"
        case .current: "status/current"
        case .lastError: "status/last-error"
        case .statusFolder: "status"
        case .root: ""
        }
    }

    func list(_ name: String) throws -> [String] {
        switch try resolve(name) {
        case .root: ["README", "recipients", "seal", "status"]
        case .statusFolder: ["current", "last-error"]
        default: throw FileSystemError(ENOTDIR)
        }
    }

    func open(_ name: String, flags: Int32) throws -> PartOpened {
        let node = try resolve(name)
        let wantsWrite = flags & O_ACCMODE != O_RDONLY || flags & O_TRUNC != 0
        switch node {
        case .root, .statusFolder: throw FileSystemError(EISDIR)
        case .recipients where wantsWrite, .seal where wantsWrite:
            if sealer.isSealed { throw FileSystemError(EROFS) }
        case _ where wantsWrite: throw FileSystemError(EACCES)
        default: break
        }
        return PartOpened(file: OpenFile(node: node, bytes: wantsWrite ? [] : content(node)), keepCache: false, directIO: true)
    }

    func read(_ file: AnyObject, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64,
              stop: () -> Int32?) throws -> Int {
        guard let open = file as? OpenFile else { throw FileSystemError(EBADF) }
        return copyGenerated(open.bytes, into: buffer, at: offset)
    }

    func write(_ file: AnyObject, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        guard let open = file as? OpenFile else { throw FileSystemError(EBADF) }
        let bytes = Array(buffer)
        switch open.node {
        case .recipients: try sealer.addRecipients(from: bytes)
        case .seal:
            let word = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard word == "seal" else { throw errors.failure(EINVAL, "seal: write the word 'seal'") }
            try sealer.seal()
            sealed?()
        default: throw FileSystemError(EBADF)
        }
        return buffer.count
    }

    /// `echo … > recipients` truncates first; these files hold nothing to cut.
    func truncate(_ name: String?, to length: Int64, file: AnyObject?) throws {
        guard let name else { throw FileSystemError(EBADF) }
        switch try resolve(name) {
        case .recipients, .seal: if sealer.isSealed { throw FileSystemError(EROFS) }
        default: throw FileSystemError(EACCES)
        }
    }

    func release(_ file: AnyObject) {}

    static let readme = """
    asicfs control folder of a new encrypted container
    ==================================================

    This hidden folder belongs to asicfs. Files copied into the mount are encrypted into the
    container when it is sealed. Until then they are kept in spool files encrypted with a key
    that exists only in the daemon's memory: plaintext never reaches the disk.

    recipients           write a recipient: one or several certificates (PEM), or, for CDOC2
                         (.cdoc2), a line "password-file=PATH" or "password" (pinentry asks);
                         a bad one fails the write (EINVAL). Reading lists the format and the
                         recipients so far.
    seal                 write "seal" to write the container, atomically (nothing on failure;
                         EINVAL without recipients or files); the folder becomes read-only
    status/
      current            open: N recipients | sealed: SUMMARY
      last-error         the last error, one line

    Unmounting seals when there are recipients and files; else nothing is written.

      cat alice.pem > .asicfs/recipients && cp letter.pdf . && echo seal > .asicfs/seal

    """
}

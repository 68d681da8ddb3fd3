import ASiC
import CDOC
import Foundation
import Signing

/// The `.asicfs` folder of a mounted encrypted container: help, the recipients (who can open
/// it; no key needed), the state of a decryption, and the request files `decrypt/<method>` that
/// decrypt it (a `key=value` line, as `sign/<method>` takes; checked at each write, taken at the
/// close). Nothing here can be removed, renamed or made (EPERM).
final class EncryptedControlFolder: MountPart, @unchecked Sendable {
    private let decryption: DecryptionCoordinator
    private let errors: LastError
    private let mountedAt: Date

    init(decryption: DecryptionCoordinator, errors: LastError, mountedAt: Date) {
        self.decryption = decryption
        self.errors = errors
        self.mountedAt = mountedAt
    }

    private enum Node: Equatable {
        case root, decryptFolder, statusFolder
        case readme, recipients, current, lastError, idCard
        case request(DecryptionMethod)
    }

    private func resolve(_ name: String) throws -> Node {
        switch name.split(separator: "/", omittingEmptySubsequences: false).map(String.init) {
        case [""]: return .root
        case ["README"]: return .readme
        case ["decrypt"]: return .decryptFolder
        case ["status"]: return .statusFolder
        case ["status", "recipients"]: return .recipients
        case ["status", "current"]: return .current
        case ["status", "last-error"]: return .lastError
        case ["status", "id-card"]: return .idCard
        case let parts where parts.count == 2 && parts[0] == "decrypt":
            guard let method = DecryptionMethod(rawValue: parts[1]) else { throw FileSystemError(ENOENT) }
            return .request(method)
        default: throw FileSystemError(ENOENT)
        }
    }

    private func content(_ node: Node) -> [UInt8] {
        switch node {
        case .readme: return Array(Self.readme.utf8)
        case .recipients: return Array(recipientsText.utf8)
        case .current: return Array(decryption.currentText.utf8)
        case .lastError:
            let error = PrintableText.escaped(errors.text)
            return error.isEmpty ? [] : Array((error + "\n").utf8)
        case .idCard: return Array(idCardText.utf8)
        case .request(let method): return Array(Self.requestHelp(method).utf8)
        case .root, .decryptFolder, .statusFolder: return []
        }
    }

    /// What reading `decrypt/<method>` shows: the method's parameters as a mount takes them (no
    /// `*-fd=`: the daemon has none of the writer's descriptors), who asks for a secret, and an
    /// example.
    static func requestHelp(_ method: DecryptionMethod) -> String {
        var usage = method.usage
        for descriptor in [" [pin-fd=N]", "|passphrase-fd=N", "|password-fd=N"] {
            usage = usage.replacingOccurrences(of: descriptor, with: "")
        }
        let asks: String? = switch method {
        case .idCard: "PIN1 is asked by pinentry (the pinentry setting), else typed on the reader's PIN pad"
        case .pkcs11: "the token's PIN is asked by pinentry (the pinentry setting), else typed on the reader's PIN pad"
        case .pkcs12, .key: "a passphrase not in a file is asked by pinentry"
        case .password: "a password not in a file is asked by pinentry"
        case .secret: nil
        }
        let example = switch method {
        case .idCard: "echo \"\" > .asicfs/decrypt/id-card"
        case .pkcs11: "echo 'key=LABEL' > .asicfs/decrypt/pkcs11"
        case .pkcs12: "echo \"file=$HOME/keys/me.p12\" > .asicfs/decrypt/pkcs12"
        case .key: "echo \"key-file=$HOME/keys/me.pem\" > .asicfs/decrypt/key"
        case .secret: "echo \"secret-file=$HOME/keys/letter.b64\" > .asicfs/decrypt/secret"
        case .password: "echo \"\" > .asicfs/decrypt/password"
        }
        return [usage, asks, "example: " + example].compactMap { $0 }.joined(separator: "\n") + "\n"
    }

    /// `status/id-card`: the decryption's state, then the card as it is now. While a decryption
    /// runs the card is not asked: it may be in the reader's PIN-pad entry, which holds the card
    /// until the person types (or the pad gives up), and a status read must not wait for that.
    private var idCardText: String {
        let state = decryption.stateLine
        if decryption.isRunning { return state + "\n" + Self.cardInUse + "\n" }
        // Card I/O takes a while: the FUSE reader role goes to another thread first.
        FuseReader.mayWait()
        return ([state] + IDCardStatusLines.read()).joined(separator: "\n") + "\n"
    }

    static let cardInUse = "card: in use by the decryption (the reader, the holder and the PIN counters show once it ends)"

    /// The format, then one recipient a line: its kind and who it is (certificate subject or
    /// label), escaped so that a control character in a label is never printed raw.
    private var recipientsText: String {
        var lines = ["format: \(decryption.format.rawValue)"]
        for recipient in decryption.recipients {
            var line = "\(recipient.kind.rawValue): \(PrintableText.escaped(recipient.displayName))"
            if recipient.kind == .keyServer { line += " (needs the key server: not supported)" }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - MountPart

    func attributes(_ name: String) throws -> NodeAttributes {
        let node = try resolve(name)
        switch node {
        case .root, .decryptFolder, .statusFolder: return .directory(0o555, mountedAt)
        case .request: return NodeAttributes(kind: .file, size: Int64(content(node).count), permissions: 0o644, modified: mountedAt, isDynamic: true)
        // Changing content: no size (a size the kernel kept from before would cut a reader that
        // trusts it, as Foundation does, short); reads are direct_io and go to the end.
        case .current, .lastError, .idCard: return NodeAttributes(kind: .file, size: 0, permissions: 0o444, modified: mountedAt, isDynamic: true)
        default: return NodeAttributes(kind: .file, size: Int64(content(node).count), permissions: 0o444, modified: mountedAt, isDynamic: true)
        }
    }

    private final class OpenFile {
        let bytes: [UInt8]
        let request: DecryptRequest?
        init(bytes: [UInt8], request: DecryptRequest?) {
            self.bytes = bytes
            self.request = request
        }
    }

    func attributes(of file: AnyObject) throws -> NodeAttributes {
        guard let open = file as? OpenFile else { throw FileSystemError(EBADF) }
        return NodeAttributes(kind: .file, size: Int64(open.bytes.count), permissions: open.request == nil ? 0o444 : 0o644,
                              modified: mountedAt, isDynamic: true)
    }

    func list(_ name: String) throws -> [String] {
        switch try resolve(name) {
        case .root: return ["README", "decrypt", "status"]
        case .decryptFolder: return DecryptionMethod.allCases.map(\.rawValue)
        case .statusFolder: return ["current", "id-card", "last-error", "recipients"]
        default: throw FileSystemError(ENOTDIR)
        }
    }

    func open(_ name: String, flags: Int32) throws -> PartOpened {
        let node = try resolve(name)
        let wantsWrite = flags & O_ACCMODE != O_RDONLY || flags & O_TRUNC != 0
        switch node {
        case .root, .decryptFolder, .statusFolder: throw FileSystemError(EISDIR)
        case .request(let method) where wantsWrite:
            return PartOpened(file: OpenFile(bytes: content(node), request: DecryptRequest(method: method)), keepCache: false, directIO: true)
        case _ where wantsWrite: throw FileSystemError(EACCES)
        default:
            return PartOpened(file: OpenFile(bytes: content(node), request: nil), keepCache: false, directIO: true)
        }
    }

    func read(_ file: AnyObject, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64,
              stop: () -> Int32?) throws -> Int {
        guard let open = file as? OpenFile else { throw FileSystemError(EBADF) }
        return copyGenerated(open.bytes, into: buffer, at: offset)
    }

    func write(_ file: AnyObject, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        guard let request = (file as? OpenFile)?.request else { throw FileSystemError(EBADF) }
        try decryption.write(request, buffer, at: offset)
        return buffer.count
    }

    /// `echo … > decrypt/<method>` truncates first; a request file holds nothing to cut.
    func truncate(_ name: String?, to length: Int64, file: AnyObject?) throws {
        guard let name else { throw FileSystemError(EBADF) }
        if case .request = try resolve(name) { return }
        throw FileSystemError(EACCES)
    }

    func release(_ file: AnyObject) {
        if let request = (file as? OpenFile)?.request { decryption.take(request) }
    }

    private func refuse(_ name: String) throws -> Never {
        _ = try resolve(name)
        throw errors.failure(EPERM, "cannot change \(PrintableText.escaped(ControlFolder.shownName(name))): nothing in "
            + "\(ControlFolder.name) can be removed, renamed or made")
    }

    func unlink(_ name: String) throws { try refuse(name) }
    func removeFolder(_ name: String) throws { try refuse(name) }
    func makeFolder(_ name: String) throws { throw FileSystemError(EPERM) }
    func rename(_ from: String, to: String, flags: RenameFlags) throws { try refuse(from) }

    static let readme = """
    asicfs control folder of an encrypted container
    ===============================================

    This hidden folder belongs to asicfs. The container (CDOC 1.0, 1.1 or CDOC2) is encrypted:
    until it is decrypted the mount shows only this folder; afterwards its files appear,
    read-only (mode 0444). Decrypted bytes never reach the disk readable: they are kept in spool
    files encrypted with a key that exists only in the daemon's memory, and unmounting drops the
    key and the spool files.

    status/
      recipients         the format, then who can decrypt: one recipient a line, its kind
                         (rsa-certificate, ec-certificate, rsa-public-key, ec-public-key,
                         symmetric-key, password, key-server, key-shares) and the
                         certificate's subject or the key's label
      current            idle | decrypting: METHOD | waiting-for-user: WHAT (PIN1 on
                         the reader's PIN pad, a PIN in pinentry's dialog) | done: SUMMARY |
                         failed: REASON
      id-card            the line of current, then the ID-card as it is now: the reader,
                         the holder and the PIN counters (read without a PIN); while a
                         decryption runs, "card: in use by the decryption …" instead (the
                         card is not asked then: a PIN pad may hold it)
      last-error         the last error, one line (a refused request, a failed decryption)
    decrypt/             write a request to one of these files to decrypt the container;
                         reading one shows its parameters
      id-card            "" or "reader=NAME" and, without contact, "can=DIGITS" (the card
                         access number, as for sign/id-card); PIN1 is asked by pinentry
                         (run by the mount's daemon), else typed on the reader's PIN pad
      pkcs11             "" or "[module=PATH] [label=TOKEN] [slot=ID] [key=LABEL|ID]"; the
                         token's PIN is asked by pinentry (or the reader's PIN pad)
      pkcs12             "file=PATH [passphrase-file=PATH]" (else pinentry asks)
      key                "key-file=PATH [cert-file=PATH] [passphrase-file=PATH]"
      secret             "secret-file=PATH [label=TEXT]" (CDOC2 symmetric key, base64)
      password           "[password-file=PATH] [label=TEXT]" (CDOC2; else pinentry asks)

    A request is one line of key=value parameters with absolute paths, taken when the file is
    closed. Each write checks what it can: bad parameters fail the write with EINVAL and
    status/last-error says why; while a decryption runs, or once decrypted, with EBUSY. The
    decryption then runs in the background: status/current says when it is done (or why it
    failed; a failed decryption leaves nothing and can be tried again).

      echo "" > .asicfs/decrypt/id-card && cat .asicfs/status/current
      echo "password-file=$HOME/.letter.pass" > .asicfs/decrypt/password

    Files cannot be added, changed or removed (EROFS). In a browse mount every encrypted
    container folder has its own .asicfs; a decrypted one stays open until the unmount.

    """
}

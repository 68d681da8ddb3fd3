import ASiC
import CDOC
import Configuration
import Crypto
import Foundation
import Signing

/// What a folder to be sealed into an encrypted container knows: its recipients so far (added
/// by writes to `.asicfs/recipients`), and whether it is sealed. `seal()` writes the container
/// atomically: into an unnamed file (O_TMPFILE) in the container's folder, linked to its name only
/// when complete, so a failure, or a daemon killed while sealing, leaves nothing.
final class Sealer: @unchecked Sendable {
    /// Where the container is written (in browse mode through the held folder, `PinnedFolder`).
    let containerPath: String
    /// The container as the user names it (for messages).
    let shownPath: String
    let format: EncryptedFormat
    /// Who the written file belongs to (browse mode: the user who made the folder); nil: the daemon's user.
    private let owner: (user: uid_t, group: gid_t)?
    private let spool: SealSpool
    private let configuration: Configuration
    private let errors: LastError
    private let lock = NSLock()
    private var recipients: [RecipientSpec] = []
    private var sealedSummary: String?
    /// What `recipients` listed when the container was sealed (the secrets themselves are wiped).
    private var sealedRecipients: [String] = []

    init(containerPath: String, shownAs shownPath: String? = nil, owner: (user: uid_t, group: gid_t)? = nil,
         format: EncryptedFormat, spool: SealSpool, configuration: Configuration, errors: LastError) {
        self.containerPath = containerPath
        self.shownPath = shownPath ?? containerPath
        self.owner = owner
        self.format = format
        self.spool = spool
        self.configuration = configuration
        self.errors = errors
    }

    /// The extension tells the format only here, where there are no bytes yet to tell it by.
    static func format(forNewContainer path: String) -> EncryptedFormat? {
        switch (PathText.lastComponent(of: path) as NSString).pathExtension.lowercased() {
        case "cdoc": .cdoc11
        case "cdoc2": .cdoc2
        default: nil
        }
    }

    var isSealed: Bool { lock.withLock { sealedSummary != nil } }

    var statusText: String {
        lock.withLock {
            if let sealedSummary { return "sealed: \(sealedSummary)\n" }
            return "open: \(recipients.count) recipient\(recipients.count == 1 ? "" : "s")\n"
        }
    }

    /// The format, then one recipient a line (its kind and who it is, escaped).
    var recipientsText: String {
        let lines = lock.withLock { sealedSummary != nil ? sealedRecipients : recipientLines }
        return (["format: \(format.rawValue)"] + lines).joined(separator: "\n") + "\n"
    }

    /// One line a recipient (the caller holds `lock`).
    private var recipientLines: [String] {
        recipients.map { recipient -> String in
            switch recipient {
            case .certificate(let certificate): "certificate: \(PrintableText.escaped(certificate.subjectLine))"
            case .publicKey(_, let label): "public-key: \(PrintableText.escaped(label))"
            case .symmetricKey(_, let label): "symmetric-key: \(PrintableText.escaped(label))"
            case .password(_, let label): "password: \(PrintableText.escaped(label))"
            }
        }
    }

    /// One write to `.asicfs/recipients`: certificates (PEM, one or several), or a line
    /// `password-file=PATH` or `password` (pinentry asks; CDOC2 only). All or nothing.
    func addRecipients(from bytes: [UInt8]) throws {
        if isSealed { throw errors.failure(EROFS, "the container is sealed already") }
        var found: [RecipientSpec] = []
        if bytes.contains(0x2D), String(decoding: bytes, as: UTF8.self).contains("-----BEGIN") {
            let certificates = Certificate.all(pem: bytes)
            guard !certificates.isEmpty else { throw errors.failure(EINVAL, "recipients: no readable certificate (PEM) in what was written") }
            found = certificates.map { .certificate($0) }
        } else {
            let text = String(decoding: bytes, as: UTF8.self)
            for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) where !line.isEmpty {
                found.append(try passwordRecipient(line))
            }
            guard !found.isEmpty else { throw errors.failure(EINVAL, "recipients: write a certificate (PEM), 'password-file=PATH' or 'password'") }
        }
        lock.withLock { recipients += found }
    }

    private func passwordRecipient(_ line: String) throws -> RecipientSpec {
        guard line == "password" || line.hasPrefix("password-file=") else {
            throw errors.failure(EINVAL, "recipients: unknown line '\(PrintableText.escaped(line))' (a certificate (PEM), 'password-file=PATH' or 'password')")
        }
        guard format == .cdoc2 else { throw errors.failure(EINVAL, "recipients: a password recipient needs CDOC2 (.cdoc2)") }
        let password: SecretBytes
        if line == "password" {
            // pinentry would ask on the daemon user's display, not the writer's (allow_other).
            if CallerRights.foreignCaller != nil { throw errors.failure(EINVAL, "recipients: only the daemon's user may ask for a password here; write 'password-file=PATH'") }
            guard let source = SecretSource.choose(descriptor: nil, configuration: configuration, terminalAllowed: false) else {
                throw errors.failure(EINVAL, "recipients: 'password-file=PATH' is required here (\(SecretSource.noPrompt))")
            }
            do {
                password = try source.ask(SecretRequest(title: "asicfs: encrypt", description: "Encrypting \(PrintableText.escaped(PathText.lastComponent(of: shownPath))) for a password", prompt: "Password"))
            } catch { throw errors.failure(EINVAL, "recipients: \(error)") }
        } else {
            let path = String(line.dropFirst("password-file=".count))
            guard path.hasPrefix("/") else { throw errors.failure(EINVAL, "recipients: password-file= needs an absolute path") }
            // With the writer's rights: another user (allow_other) names only a file they may read.
            do { password = try CallerRights.run { try SecretBytes.read(file: path) } } catch { throw errors.failure(EINVAL, "recipients: \(error)") }
        }
        if password.isEmpty { throw errors.failure(EINVAL, "recipients: the password is empty") }
        return .password(password, label: "password")
    }

    /// Writes the container; EINVAL without recipients or files, EROFS when sealed already.
    func seal() throws {
        try lock.withLock {
            if sealedSummary != nil { throw errors.failure(EROFS, "the container is sealed already") }
            let files = spool.files
            if recipients.isEmpty { throw errors.failure(EINVAL, "seal: no recipients yet (write a certificate to .asicfs/recipients)") }
            if files.isEmpty { throw errors.failure(EINVAL, "seal: no files to encrypt") }
            let sources = files.map { SealSpool.Source(spool: spool, name: $0.name, file: $0.file) }
            do { try write(sources) } catch let error as FileSystemError {
                throw errors.failure(error.code, "seal: \(error.description)")
            } catch { throw errors.failure(EIO, "seal: \(error)") }
            sealedSummary = "\(PrintableText.escaped(shownPath)) (\(format.rawValue), \(files.count) file\(files.count == 1 ? "" : "s"), "
                + "\(recipients.count) recipient\(recipients.count == 1 ? "" : "s"))"
            sealedRecipients = recipientLines
            wipeRecipients()
        }
    }

    /// Unmount: seals when there is something to seal; else one line saying nothing was written.
    func sealOnUnmount() -> String? {
        if isSealed { return nil }
        let (noRecipients, noFiles) = lock.withLock { (recipients.isEmpty, spool.files.isEmpty) }
        if noRecipients || noFiles {
            lock.withLock { wipeRecipients() }
            return "\(PrintableText.escaped(shownPath)) was not written: \(noFiles ? "no files" : "no recipients") when unmounted"
        }
        do { try seal() } catch { return "\(PrintableText.escaped(shownPath)) was not written: \(errors.text)" }
        return nil
    }

    /// The folder was removed unsealed: its recipients' secrets go.
    func forget() { lock.withLock { wipeRecipients() } }

    private func wipeRecipients() {
        for case .password(let secret, _) in recipients { secret.wipe() }
        for case .symmetricKey(let secret, _) in recipients { secret.wipe() }
        recipients = []
    }

    private func write(_ sources: [PlainFileSource]) throws {
        let folder = PathText.folder(of: containerPath)
        // O_TMPFILE: the file has no name until linked, so nothing half-written can ever be seen or left.
        let descriptor = Glibc.open(folder, Self.temporaryFile | O_RDWR | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileSystemError(errno, "cannot write into \(PrintableText.escaped(PathText.folder(of: shownPath)))") }
        defer { Glibc.close(descriptor) }
        if let owner, owner != (geteuid(), getegid()), fchown(descriptor, owner.user, owner.group) != 0 {
            throw FileSystemError(errno, "cannot give \(PrintableText.escaped(shownPath)) to its maker")
        }
        try EncryptedContainer.writer(for: format).write(files: sources, for: recipients, to: descriptor)
        guard fsync(descriptor) == 0 else { throw FileSystemError(errno, "cannot write \(PrintableText.escaped(shownPath))") }
        TestHooks.beforeSealLink()
        try link(descriptor)
    }

    /// Linked to the container's name: never over a file that has bytes (another's container);
    /// over the 0-byte file `touch` made, by a rename of a second name.
    private func link(_ descriptor: Int32) throws {
        let source = "/proc/self/fd/\(descriptor)"
        var status = stat()
        if lstat(containerPath, &status) != 0 {
            guard linkat(AT_FDCWD, source, AT_FDCWD, containerPath, AT_SYMLINK_FOLLOW) == 0 else {
                throw FileSystemError(errno, "cannot create \(PrintableText.escaped(shownPath))")
            }
            return
        }
        guard status.st_mode & S_IFMT == S_IFREG, status.st_size == 0 else {
            throw FileSystemError(EEXIST, "\(PrintableText.escaped(shownPath)) exists already and is not empty")
        }
        let second = PathText.folder(of: containerPath) + "/.asicfs-seal-\(getpid())-" + PathText.lastComponent(of: containerPath)
        guard linkat(AT_FDCWD, source, AT_FDCWD, second, AT_SYMLINK_FOLLOW) == 0 else {
            throw FileSystemError(errno, "cannot create \(PrintableText.escaped(shownPath))")
        }
        guard Glibc.rename(second, containerPath) == 0 else {
            let code = errno
            unlink(second)
            throw FileSystemError(code, "cannot create \(PrintableText.escaped(shownPath))")
        }
    }

    /// Linux's O_TMPFILE (__O_TMPFILE | O_DIRECTORY), which Swift does not import as a macro.
    private static let temporaryFile: Int32 = 0o20000000 | O_DIRECTORY
}

import ASiC
import Crypto
import Foundation
import Signing
import Validation
import XAdES

/// One file of the control folder and what it shows.
enum ControlFile: Equatable {
    case readme, container
    case current, lastError, wait
    /// `status/mobile-id`, `status/smart-id`, `status/id-card`.
    case methodStatus(SigningMethod)
    /// `status/smart-id.png`: the QR code of a Smart-ID v3 `qr=yes` signing (SmartIDQRStatus).
    case smartIDQR
    /// `sign/<method>`: reading shows the parameters, writing starts a signing.
    case sign(SigningMethod)
    case signature(index: Int, part: SignaturePart)

    enum SignaturePart: String, CaseIterable {
        case signer, signingTime = "signing-time", method, status, report
        case certificate = "certificate.pem", signatureXML = "signature.xml"
        /// Writing `remove` to it removes the signature: the one explicit request that does.
        case remove

        /// Parts whose content comes from validation.
        var needsValidation: Bool { self == .status || self == .report }
    }

    static let statusMethods: [SigningMethod] = [.mobileID, .smartID, .idCard]

    /// Files written to make a request (`sign/<method>`, a signature's `remove`).
    var isRequest: Bool {
        switch self {
        case .sign, .signature(_, .remove): return true
        default: return false
        }
    }
}

/// The hidden `.asicfs` folder inside every mount: help, a summary of the container, its
/// signatures, the signing requests and the status. Every file is generated when it is opened
/// (so the kernel is told not to cache it). Writable: `sign/<method>` (starts a signing) and
/// `signatures/<n>-<NAME>/remove` (removes that signature). Nothing here can be unlinked or
/// removed (EPERM): a recursive delete that walks in must never strip a signature, which cannot
/// be made again without its signer.
///
/// A part of the mount (`MountPart`, `ControlFolder+Files`): the `MountRouter` hands it every
/// path below `.asicfs`, as the name inside it ("" is the folder itself, "sign/pkcs12").
final class ControlFolder: @unchecked Sendable {
    static let name = ".asicfs"

    enum Folder: Equatable { case root, sign, status, signatures, signature(Int) }
    enum Node: Equatable { case folder(Folder), file(ControlFile) }

    /// The data files it describes; the claim, signings and error record of the same mount.
    let files: DataFiles
    let claim: MountClaim
    let signing: SigningCoordinator
    let errors: LastError
    private let validation: ValidationCache
    /// Guards the caches below.
    private let lock = NSLock()
    private var listedGeneration: UInt64?
    private var cachedSignatures: [SignatureSummary] = []

    init(files: DataFiles, signing: SigningCoordinator, environment: SignatureEnvironment) {
        self.files = files
        claim = files.claim
        errors = files.errors
        self.signing = signing
        validation = ValidationCache(environment: environment)
    }

    /// The name inside the folder of a mount's name ("" for `.asicfs` itself), or nil when `name` is outside it.
    static func inner(_ name: String) -> String? {
        if name == Self.name { return "" }
        return name.hasPrefix(Self.name + "/") ? String(name.dropFirst(Self.name.count + 1)) : nil
    }

    /// `.asicfs/NAME`, as the user sees it (for messages).
    static func shownName(_ inner: String) -> String { inner.isEmpty ? Self.name : Self.name + "/" + inner }

    // MARK: - Signatures of the current snapshot

    func signatureList() -> (generation: UInt64, snapshot: Container, list: [SignatureSummary]) { signatures() }

    /// The report if it is known; else nil, and it is worked out in the background.
    func validationReportIfReady(for snapshot: Container, generation: UInt64) -> ContainerReport? {
        validation.reportIfReady(for: snapshot, generation: generation)
    }

    /// The signatures of the current snapshot, parsed once per snapshot.
    private func signatures() -> (generation: UInt64, snapshot: Container, list: [SignatureSummary]) {
        let (snapshot, generation) = files.currentSnapshotAndGeneration
        return lock.withLock {
            if listedGeneration != generation {
                let parsed = snapshot.signatureFiles.flatMap { file in
                    SignatureSummary.read(file: file.name, bytes: (try? snapshot.signatureBytes(file)) ?? [])
                }
                // A caller that read the snapshot just before it changed must not undo the newer cache.
                guard listedGeneration.map({ $0 < generation }) ?? true else { return (generation, snapshot, parsed) }
                cachedSignatures = parsed
                listedGeneration = generation
            }
            return (generation, snapshot, cachedSignatures)
        }
    }

    /// "<n>-<SIGNER NAME>" with '/' (impossible in a file name) replaced, and control and
    /// bidirectional characters escaped as everywhere else (`PrintableText`).
    private func folderName(_ index: Int, _ signature: SignatureSummary) -> String {
        "\(index)-" + PrintableText.escaped(signature.signerName).replacingOccurrences(of: "/", with: "∕")
    }

    private func signatureIndex(_ folder: String, in list: [SignatureSummary]) -> Int? {
        list.indices.first { folderName($0, list[$0]) == folder }
    }

    // MARK: - Paths

    /// What a name inside the folder ("", "sign/pkcs12") is.
    func resolve(_ name: String) throws -> Node {
        let parts = [Self.name] + name.split(separator: "/").map(String.init)
        switch parts.count {
        case 1: return .folder(.root)
        case 2:
            switch parts[1] {
            case "README": return .file(.readme)
            case "container": return .file(.container)
            case "sign": return .folder(.sign)
            case "status": return .folder(.status)
            case "signatures": return .folder(.signatures)
            default: throw FileSystemError(ENOENT)
            }
        case 3:
            switch parts[1] {
            case "sign":
                if let method = SigningMethod(rawValue: parts[2]) { return .file(.sign(method)) }
            case "status":
                switch parts[2] {
                case "current": return .file(.current)
                case "last-error": return .file(.lastError)
                case "wait": return .file(.wait)
                case "smart-id.png": return .file(.smartIDQR)
                default:
                    if let method = SigningMethod(rawValue: parts[2]), ControlFile.statusMethods.contains(method) {
                        return .file(.methodStatus(method))
                    }
                }
            case "signatures":
                if let index = signatureIndex(parts[2], in: signatures().list) { return .folder(.signature(index)) }
            default: break
            }
            throw FileSystemError(ENOENT)
        case 4:
            guard parts[1] == "signatures", let index = signatureIndex(parts[2], in: signatures().list),
                  let part = ControlFile.SignaturePart(rawValue: parts[3]) else {
                throw FileSystemError(ENOENT)
            }
            return .file(.signature(index: index, part: part))
        default:
            throw FileSystemError(ENOENT)
        }
    }

    // MARK: - Attributes, listing, opening

    func attributes(_ name: String) throws -> NodeAttributes {
        switch try resolve(name) {
        case .folder:
            return .directory(0o555, files.mountedAt)
        case .file(let file):
            let size: Int
            switch file {
            // Blocking or costly content: no size, ever (reads use direct_io anyway; readers
            // that trust the size, as Foundation does, then read to the end). A size that
            // changed once validated would make `tar` say "file changed as we read it".
            case .wait, .methodStatus, .smartIDQR: size = 0
            case .signature(_, let part) where part.needsValidation: size = 0
            default: size = content(file).count
            }
            var permissions: UInt16 = 0o444
            if file.isRequest, !files.readOnly { permissions = 0o644 }
            // A stable time: copying tools compare it before and after reading.
            return NodeAttributes(kind: .file, size: Int64(size), permissions: permissions, modified: files.mountedAt,
                                  isDynamic: true)
        }
    }

    func list(_ name: String) throws -> [String] {
        guard case .folder(let folder) = try resolve(name) else { throw FileSystemError(ENOTDIR) }
        switch folder {
        case .root: return ["README", "container", "sign", "signatures", "status"]
        case .sign: return SigningMethod.allCases.map(\.rawValue)
        // `wait` blocks until a signing ends: reachable by name, never listed, so that
        // `grep -r`, `find -exec cat`, `tar` and indexers walking the mount don't hang on it.
        case .status: return ["current", "last-error"] + ControlFile.statusMethods.map(\.rawValue) + ["smart-id.png"]
        case .signatures:
            let list = signatures().list
            return list.indices.map { folderName($0, list[$0]) }
        case .signature:
            return ControlFile.SignaturePart.allCases.map(\.rawValue)
        }
    }

    /// The file a path names, for opening (folders: EISDIR).
    func file(_ name: String) throws -> ControlFile {
        guard case .file(let file) = try resolve(name) else { throw FileSystemError(EISDIR) }
        return file
    }

    // MARK: - Content

    /// What a control file holds now. `status` and `report` never wait for a validation (the
    /// trusted list may be a black-holed download, and `grep -r` or `tar` walking the mount
    /// would stall on it): they say "checking" until the background validation has ended.
    func content(_ file: ControlFile) -> [UInt8] {
        switch file {
        case .readme: return Array(Self.readme.utf8)
        case .container: return Array(containerSummary.utf8)
        case .current: return Array(signing.currentText.utf8)
        case .lastError:
            // One line whatever names the message quotes.
            let error = PrintableText.escaped(errors.text)
            return error.isEmpty ? [] : Array((error + "\n").utf8)
        case .wait: return []
        case .methodStatus(let method): return Array(signing.statusText(of: method).utf8)
        case .smartIDQR: return signing.smartIDQR.png
        case .sign(let method): return Array(method.usage.utf8)
        case .signature(let index, let part):
            let (generation, snapshot, list) = signatures()
            guard index < list.count else { return [] }
            if part.needsValidation {
                guard let report = validation.reportIfReady(for: snapshot, generation: generation) else {
                    return Array(Self.checking.utf8)
                }
                return validatedPart(list, index, part, report)
            }
            return signaturePart(list[index], part)
        }
    }

    /// What `status` and `report` say while the signatures are being validated.
    static let checking = "checking\nchecking: the signatures are being validated in the background; read this file again for the result\n"

    private func validatedPart(_ list: [SignatureSummary], _ index: Int, _ part: ControlFile.SignaturePart,
                               _ report: ContainerReport) -> [UInt8] {
        let summary = list[index]
        let position = list[..<index].filter { $0.file == summary.file }.count
        guard let signature = ValidationCache.signatureReport(for: summary, position: position, in: report) else {
            return Array("INDETERMINATE\nindeterminate: this signature was not found in the validation of \(PrintableText.escaped(summary.file))\n".utf8)
        }
        return Array((part == .status ? signature.statusText : signature.text).utf8)
    }

    private var containerSummary: String {
        let snapshot = files.currentSnapshot
        let state: String
        if files.readOnly { state = "read-only (\(files.shown(Self.whyReadOnly(snapshot.path))))" }
        else if snapshot.kind == .asicS { state = "read-only (ASiC-S: the data file is time-stamped)" }
        else if snapshot.isSigned { state = "signed: data files cannot change" }
        else if let activity = files.currentActivity {
            state = "unsigned, but \(activity): data files cannot change until it ends"
        }
        else { state = "unsigned: data files can be added, changed, renamed and removed" }
        return """
        path: \(PrintableText.escaped(files.containerPath))
        format: \(snapshot.kind.rawValue)
        data files: \(files.dataFileCount)
        signatures: \(signatures().list.count)
        state: \(state)
        unsaved changes: \(files.hasPendingChanges ? "yes (saved within seconds, on fsync and at unmount)" : "no")

        """
    }

    /// A read-only mount's reason: the container cannot be written where it is (read-only
    /// storage: `asicfs open` mounts it read-only then), or -o ro.
    static func whyReadOnly(_ path: String) -> String {
        for candidate in [path, PathText.folder(of: path)] where access(candidate, W_OK) != 0 {
            return "\(PrintableText.escaped(candidate)) cannot be written: \(String(cString: strerror(errno)))"
        }
        return "mounted with -o ro"
    }

    private func signaturePart(_ signature: SignatureSummary, _ part: ControlFile.SignaturePart) -> [UInt8] {
        let certificate = signature.certificate
        switch part {
        case .signer:
            // One line per field: the values come from the certificate.
            let show = PrintableText.escaped
            var lines = ["name: \(show(signature.signerName))"]
            if let given = certificate?.givenName, let surname = certificate?.surname {
                lines.append("given name: \(show(given))\nsurname: \(show(surname))")
            }
            if let code = certificate?.serialNumberAttribute { lines.append("personal code: \(show(code))") }
            if let country = certificate?.country { lines.append("country: \(show(country))") }
            if let issuer = certificate?.issuerCommonName { lines.append("certificate issuer: \(show(issuer))") }
            return Array((lines.joined(separator: "\n") + "\n").utf8)
        case .signingTime:
            var text = "claimed: \(PrintableText.escaped(signature.claimedSigningTime ?? "none"))\n"
            if let time = signature.timeStampTime {
                let formatter = ISO8601DateFormatter()
                formatter.timeZone = TimeZone(identifier: "UTC")
                text += "time-stamp: \(formatter.string(from: time))\n"
            } else {
                text += "time-stamp: none\n"
            }
            return Array(text.utf8)
        case .method:
            if let method = signing.method(ofSignatureIn: signature.file, id: signature.id) {
                return Array("\(method.rawValue)\n".utf8)
            }
            return Array("unknown (not made in this mount)\n".utf8)
        case .status, .report: return []
        case .remove:
            return Array(("write 'remove' to this file to remove this signature (\(PrintableText.escaped(signature.file)))"
                + " from the container\n").utf8)
        case .certificate: return Array((certificate?.pem ?? "").utf8)
        case .signatureXML: return signature.documentBytes
        }
    }

    // MARK: - Removing signatures

    /// unlink, and rmdir, of anything here: refused, and nothing changes. `rm -r` walks in
    /// (`rm -rf` of a folder holding the mount, of `.asicfs`); a signature goes only when its
    /// `remove` file is written.
    func refuseRemoval(_ name: String) throws -> Never {
        _ = try resolve(name)
        throw errors.failure(EPERM, "cannot remove \(PrintableText.escaped(Self.shownName(name))): nothing in \(Self.name) can be removed; "
            + "to remove a signature, write 'remove' to \(Self.name)/signatures/<n>-<SIGNER>/remove")
    }

    /// What the folder of `name` (a path in a signature folder) is called, and the generation
    /// of the listing that named it: a `remove` request checks the signatures did not change.
    func signatureFolder(of name: String) -> (folder: String, generation: UInt64) {
        (String(name.split(separator: "/")[1]), signatures().generation)
    }

    /// A write to `signatures/<n>-<NAME>/remove`: `remove` (and a newline) removes that
    /// signature's file from the container, atomically; anything else is EINVAL.
    func removeSignature(_ request: UnsafeRawBufferPointer, folder folderName: String, ifStill expected: UInt64) throws {
        let text = String(decoding: request, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text == "remove" else {
            throw errors.failure(EINVAL, "write 'remove' to remove the signature \(folderName); nothing else is understood")
        }
        let (generation, snapshot, list) = signatures()
        guard generation == expected, let index = signatureIndex(folderName, in: list) else {
            throw errors.failure(EBUSY, "cannot remove the signature \(folderName): the signatures changed meanwhile; look again and retry")
        }
        let file = try removableSignatureFile(index, list, snapshot)
        let action = "remove the signature \(folderName)"
        try signing.beginRemoval(action)
        var adopted: Container?
        defer { claim.release(adopting: adopted) }
        adopted = try files.savingSignatures(removing: file, ifStill: generation, action: action)
    }

    /// The signature file of signature `index`, if it can be removed on its own.
    private func removableSignatureFile(_ index: Int, _ list: [SignatureSummary], _ snapshot: Container) throws -> String {
        guard snapshot.kind == .asicE else {
            throw errors.failure(EPERM, "cannot remove the signature \(folderName(index, list[index])): this is an ASiC-S "
                + "container, whose signature or time-stamp is part of its format")
        }
        let file = list[index].file
        let count = list.filter { $0.file == file }.count
        if count > 1 {
            throw errors.failure(EPERM, "cannot remove the signature \(folderName(index, list[index])): \(file) holds \(count) "
                + "signatures and asicfs removes whole signature files only (that would remove the other \(count - 1) too)")
        }
        return file
    }

    static let readme = """
    asicfs control folder
    =====================

    This hidden folder belongs to asicfs, not to the container. Nothing in it is stored in
    the container.

    container            path, format, number of data files and signatures, state
    sign/                write a request to one of these files to sign the container;
                         reading one shows its parameters and an example
      mobile-id          "phone=+372... idcode=..." [language=EST|ENG|RUS|LIT] [message=...]
      smart-id           "country=EE idcode=..." or "document=PNOEE-..." or "qr=yes"
                         [display=pin|confirmation] [message=...]
      pkcs12             "file=PATH passphrase-file=PATH" (a .p12/.pfx file)
      id-card            "" or "reader=NAME" (part of the reader's name) and, for a
                         card read without contact, "can=DIGITS" (the card access
                         number printed on it); PIN2 is asked by pinentry (setting
                         pinentry), else typed on the reader's PIN pad
      pkcs11             "" or "[module=PATH] [label=TOKEN] [slot=ID] [key=LABEL|ID]":
                         a PKCS#11 token (found through p11-kit without module=);
                         the PIN is asked by pinentry (setting pinentry), or typed on
                         the reader's PIN pad; 'asicfs tokens' lists the tokens
      remote             "credential=ID" (a key of the remote signing service,
                         CSC API: settings remote.url, remote.tls-cert and the
                         other remote.* ones); without it the account's only
                         credential; a PIN is asked by pinentry
                         (pin-fd=N is for the command line only: a mount
                         refuses it, EINVAL)
                         every method also takes role=... city=... state=...
                         postal-code=... country=... (signer role and production
                         place; for smart-id, country= is the person's country)
                         writing "cancel" to the file of the running method stops it
    signatures/<n>-<SIGNER NAME>/
      signer             name, personal code, country, certificate issuer
      signing-time       claimed signing time and the time-stamp time (ISO 8601, UTC)
      method             the method, for signatures made in this mount; else unknown
      status             VALID, VALID_WITH_WARNINGS, INVALID or INDETERMINATE, then
                         one reason a line (validated once per change, in the background;
                         until that ends it reads "checking" and a line saying to read
                         it again: a read never waits for the network)
      report             the full validation report (or "checking", as status)
      certificate.pem    the signer's certificate
      signature.xml      the raw XAdES signature document
      remove             write "remove" to it to remove this signature
    status/
      current            idle | signing: STEP | waiting-for-user: WHAT |
                         done: SUMMARY | failed: REASON   (one line)
      wait               blocks until no signing runs, then shows how the last one ended
                         (not listed, so that tools walking the mount don't wait on it)
      last-error         the last error, one line (a refused request or change, a failed
                         signing or save)
      mobile-id, smart-id
                         the state of a signing with that method (or how the last
                         one ended, or "idle"), then its 4-digit verification code
                         while the user must compare it with the phone ("no
                         verification code" before and after). While that signing
                         runs and its code is not known yet, a read waits for the
                         code or the end of the signing (not when opened O_NONBLOCK).
                         Smart-ID qr=yes: "device link: URL" instead of a code
      smart-id.png       the QR code to scan during a Smart-ID qr=yes signing (a PNG,
                         renewed each second); empty otherwise
      id-card            the state of an ID-card signing (or how the last one ended, or
                         "idle"), then the card as it is now: "reader: NAME",
                         "holder: SURNAME, GIVEN NAMES (CODE)" and "PIN1: N of 3 tries
                         left" (PIN2, PUK the same); or "no card information: WHY"

    Signing:
      echo "phone=+37200000766 idcode=60001019906" > .asicfs/sign/mobile-id &&
        cat .asicfs/status/mobile-id && cat .asicfs/status/wait
      echo "file=$HOME/me.p12 passphrase-file=$HOME/.me.pass" > .asicfs/sign/pkcs12 &&
        cat .asicfs/status/wait
      echo "" > .asicfs/sign/id-card && cat .asicfs/status/wait
      echo "label=MyToken" > .asicfs/sign/pkcs11 && cat .asicfs/status/wait
      echo "credential=my-key" > .asicfs/sign/remote && cat .asicfs/status/wait
    Mobile-ID and Smart-ID: status/<method> shows the verification code before the phone asks
    for the PIN, until the phone has answered (also as a desktop notification where a desktop
    session is present; notify = no turns that off); sign only if the phone shows the same
    code. SK's hosts are checked by built-in key pins; any other service needs its TLS
    certificate pinned (mobile-id.tls-cert, smart-id.tls-cert). `echo cancel > .asicfs/sign/<method>` stops the running signing;
    unmounting stops it too (asicfs umount also when readers wait in status/wait).
    While a signing runs, `container` says so and data files cannot change.
    A request is one line, taken when the file is closed (it may come in several writes). Each
    write checks what it can; bad parameters (an unknown key, a missing one once the line
    has its newline, a relative path, pin-fd=, an empty container, remote.url unset) fail
    the write with EINVAL ("Invalid argument") and status/last-error says what was wrong. A
    fault found only at the close (no final newline) starts nothing: last-error and
    status/wait say why. A good request returns at once and the signing runs in the
    background once the file is closed; a second request while one runs fails with EBUSY.
    Changes not saved yet are saved first; while a file is still open for writing the request
    fails with EBUSY, and while the signing runs data files cannot change (EBUSY). A signing
    that fails leaves the container exactly as it was.

    status/wait: the first read blocks until no signing runs (other operations go on), then
    returns one line:
      done: SUMMARY                  the last signing succeeded (e.g. "done: signed: NAME S0
                                     in META-INF/signatures0.xml, VALID")
      failed: REASON                 the last signing failed; the container is unchanged
      idle: no signing has run       no signing was started in this mount
    After "failed:" the next read fails with EIO, so `cat .asicfs/status/wait` prints the line
    and exits non-zero; after "done:" or "idle:" it ends normally and cat exits 0. An
    interrupted wait (Ctrl-C) fails with EINTR. asicfs umount cancels the signing, so the wait
    ends with "failed: the signing was cancelled; ..."; a wait cut short because the daemon
    stops (SIGTERM, SIGINT, SIGHUP) fails with EIO.

    Removing a signature: echo remove > ".asicfs/signatures/<n>-<SIGNER NAME>/remove" removes
    that signature's file from the container, atomically; anything else written is refused
    (EINVAL). This is the only way: nothing in .asicfs can be removed (rm, rm -r, rmdir fail
    with EPERM and change nothing), so a recursive delete never strips a signature. A
    signature file that holds several signatures is not split (EPERM). Not while a signing
    runs (EBUSY).

    The data files of the container are the other files of the mount. While the container is
    unsigned, copy files in, edit, rename and remove them as in any folder: changes are saved
    to the container, atomically, a moment after the last change, on fsync and at unmount.
    Once the container is signed, its data files cannot change (EPERM); removing every
    signature makes them editable again.

    Editor and desktop temporaries (name~, .name.swp, .~lock.name#, .goutputstream-*,
    .DS_Store, Thumbs.db, ... : the setting transient-names) made in the mount stay in the
    mount only and are never saved; one renamed to a normal name becomes a data file. An
    entry the container already has, and a data file renamed to such a name, are saved like
    any other: a name alone never drops data. There is no trash in a
    container: mkdir .Trash fails (EPERM), so delete permanently. The mount's folder has the
    extended attributes user.asicfs.status and user.asicfs.signers (getfattr -d); the status
    reads "checking" while the signatures are validated in the background.

    In a browse mount (asicfs mount DIRECTORY MOUNTPOINT) this folder belongs to one
    container folder; every container has its own. Moving a data file to another container
    or out to a real folder copies it (the rename fails with EXDEV, and mv copies). The
    container is saved, closed and let go (for asicfs add, a single mount) a few seconds after
    its last file closes, and reopened on use; while another program holds it, entering it
    fails with EBUSY and is tried again on the next access. Another program's change to it is
    seen within a second when nothing here is unsaved. A signed container is never removed.

    """
}

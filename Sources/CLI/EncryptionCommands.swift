import ASiC
import CDOC
import Configuration
import Crypto
import Foundation
import Glibc
import Signing

let decryptCommand = Command(
    name: "decrypt",
    synopsis: "decrypt FILE [-d DIR | --stdout NAME] --method METHOD [KEY=VALUE...]",
    summary: "decrypt a .cdoc/.cdoc2 file into a folder",
    details: """
    Decrypts an encrypted DigiDoc container (CDOC 1.0, 1.1 or CDOC2, told by content) with one of:
    \(DecryptionMethod.allCases.map { "  " + $0.usage }.joined(separator: "\n"))
    The recipient that matches the key is chosen; several matching ones are an error naming them.
    With id-card and pkcs11 the private key never leaves the card or token, which computes the
    key agreement (or unwraps an RSA-wrapped key); PIN1 or the token's PIN comes from pin-fd=,
    else it is asked as PIN2 is for signing. `man asicfs`, THE ID-CARD, says more.
    Passphrases and passwords come from the *-file= or *-fd= parameter, else pinentry (setting
    pinentry), else the terminal. The files appear in DIR (default: the current folder, mode
    0600) only after everything decrypted and authenticated, and never over an existing name;
    on any failure nothing is written. --stdout NAME prints one file instead, once all of it
    authenticated; until then it waits in an unnamed file in $TMPDIR encrypted with a key that
    exists only in memory. Memory use does not grow with the file's size.
    """,
    options: [OptionSpec(names: ["-m", "--method"], takesValue: true, help: DecryptionMethod.allCases.map(\.rawValue).joined(separator: ", ")),
              OptionSpec(names: ["-d", "--directory"], takesValue: true, help: "decrypt into this folder"),
              OptionSpec(names: ["--stdout"], takesValue: true, help: "write the file NAME to standard output"),
              jsonOption],
    run: { arguments, context in
        try requirePositionals(arguments, atLeast: 1, "FILE")
        guard let name = arguments.value("--method") else { throw UsageError("missing --method") }
        guard let method = DecryptionMethod(rawValue: name) else {
            let names = DecryptionMethod.allCases.map(\.rawValue)
            let suggestion = Suggestion.closest(to: name, among: names).map { "; did you mean '\($0)'?" } ?? ""
            throw UsageError("unknown method '\(name)'\(suggestion) (one of \(names.joined(separator: ", ")))")
        }
        if arguments.has("--stdout") && arguments.has("--directory") { throw UsageError("-d and --stdout cannot go together") }
        if arguments.has("--stdout") && arguments.has("--json") { throw UsageError("--json and --stdout cannot go together: the data is the output") }
        let parameters: SigningParameters
        do { parameters = try method.parse(arguments: Array(arguments.positionals.dropFirst())) } catch let error as SigningParameterError {
            throw UsageError(error.description)
        }
        let path = arguments.positionals[0]
        return try EncryptedFile.reading(path) { reader in
            let unlocker = try method.unlocker(parameters, configuration: context.configuration, commandLine: true)
            defer { EncryptedFile.wipe(unlocker) }
            if let wanted = arguments.value("--stdout") {
                let sink = try OneFileToStandardOutput(wanted: wanted)
                try reader.decrypt(with: unlocker, into: sink)
                guard sink.found else { throw CDOCError(.io, "\(path) holds no file named '\(wanted)'") }
                try sink.print()
                return 0
            }
            let folder = DecryptedFilesFolder(folder: arguments.value("--directory") ?? ".")
            try folder.prepare()
            do { try reader.decrypt(with: unlocker, into: folder) } catch {
                folder.abandon()
                throw error
            }
            let written = try folder.commit()
            if arguments.has("--json") {
                CommandJSON.success("decrypt", container: path, ["format": .text(reader.format.rawValue), "decrypted": CommandJSON.names(written)])
            } else if !context.quiet {
                Terminal.out(written.map { "decrypted \($0)" }.joined(separator: "\n"))
            }
            return 0
        }
    })

let encryptCommand = Command(
    name: "encrypt",
    synopsis: "encrypt OUT FILE... --recipient CERT [--format cdoc|cdoc1.0|cdoc2]",
    summary: "encrypt files into a new .cdoc/.cdoc2 file",
    details: """
    Encrypts the FILEs for every --recipient certificate (PEM or DER; repeatable). The default
    format is what DigiDoc4 writes: CDOC 1.1 (AES-256-GCM; RSA and EC P-256/P-384/P-521
    certificates). --format cdoc1.0 writes CDOC 1.0 (AES-128-CBC, RSA only) for old readers;
    --format cdoc2 writes CDOC2, which also takes --password-file F (a password recipient).
    OUT is written through a temporary file and appears only when complete; it is never
    replaced: an existing OUT is an error.
    """,
    options: [OptionSpec(names: ["-r", "--recipient"], takesValue: true, help: "a recipient's certificate file (repeatable)"),
              OptionSpec(names: ["--password-file"], takesValue: true, help: "also encrypt for the password in this file (CDOC2)"),
              OptionSpec(names: ["--format"], takesValue: true, help: "cdoc (CDOC 1.1, default), cdoc1.0 or cdoc2"),
              jsonOption],
    run: { arguments, context in
        try requirePositionals(arguments, atLeast: 2, "OUT and at least one FILE")
        let format: EncryptedFormat
        switch arguments.value("--format") ?? "cdoc" {
        case "cdoc", "cdoc1.1": format = .cdoc11
        case "cdoc1.0": format = .cdoc10
        case "cdoc2": format = .cdoc2
        case let other: throw UsageError("unknown format '\(other)' (one of cdoc, cdoc1.0, cdoc2)")
        }
        var recipients: [RecipientSpec] = []
        for file in arguments.all("--recipient") {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ContainerError.io(path: file, operation: "cannot read", errno: errno == 0 ? ENOENT : errno)
            }
            let found = Certificate.all(pem: Array(data))
            let certificates = found.isEmpty ? [try? Certificate(der: Array(data))].compactMap { $0 } : found
            if certificates.isEmpty { throw UsageError("\(file) holds no certificate (PEM or DER)") }
            recipients += certificates.map { .certificate($0) }
        }
        if let passwordFile = arguments.value("--password-file") {
            let password: SecretBytes
            do { password = try SecretBytes.read(file: passwordFile) } catch let error as CryptoError { throw UsageError(error.description) }
            if password.isEmpty { throw UsageError("the password file \(passwordFile) is empty") }
            recipients.append(.password(password, label: "password"))
        }
        if recipients.isEmpty { throw UsageError("missing --recipient (or --password-file with --format cdoc2)") }
        let out = arguments.positionals[0]
        let sources = try arguments.positionals.dropFirst().map { try PlainFileFromDisk(path: $0) }
        try EncryptedFile.create(out) { descriptor in
            try EncryptedContainer.writer(for: format).write(files: sources, for: recipients, to: descriptor)
        }
        if arguments.has("--json") {
            CommandJSON.success("encrypt", container: out, ["format": .text(format.rawValue),
                "data_files": .list(sources.map { .object(["name": .text($0.name), "size": .number(Int($0.size))]) }),
                "recipients": .number(recipients.count)])
        } else if !context.quiet {
            Terminal.out("encrypted \(sources.count) file\(sources.count == 1 ? "" : "s") into \(out) (\(format.rawValue), "
                + "\(recipients.count) recipient\(recipients.count == 1 ? "" : "s"))")
        }
        return 0
    })

/// Opening and creating encrypted container files for the commands.
enum EncryptedFile {
    /// Runs `body` with the reader of `path`. The readers read the payload through the open
    /// descriptor when they decrypt (CDOC2 streams it), so it stays open until `body` returns.
    static func reading<R>(_ path: String, _ body: (EncryptedContainerReader) throws -> R) throws -> R {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ContainerError.io(path: path, operation: "cannot open", errno: errno) }
        defer { close(descriptor) }
        return try body(try EncryptedContainer.open(descriptor: descriptor))
    }

    /// Writes `path` through a private temporary file beside it, linked to its name only when
    /// complete (link(2) never replaces an existing file); nothing is left on failure.
    static func create(_ path: String, _ write: (Int32) throws -> Void) throws {
        var status = stat()
        if lstat(path, &status) == 0 { throw ContainerError.refused("it exists already; choose another name") }
        let folder = (path as NSString).deletingLastPathComponent
        var template = Array("\(folder.isEmpty ? "." : folder)/.asicfs-encrypt-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw ContainerError.io(path: folder.isEmpty ? "." : folder, operation: "cannot write into", errno: errno) }
        let temporary = String(cString: template)
        defer { unlink(temporary) }
        do {
            try write(descriptor)
            guard fchmod(descriptor, 0o644 & ~currentUmask()) == 0, fsync(descriptor) == 0 else {
                throw ContainerError.io(path: path, operation: "cannot write", errno: errno)
            }
            close(descriptor)
        } catch {
            close(descriptor)
            throw error
        }
        guard link(temporary, path) == 0 else {
            if errno == EEXIST { throw ContainerError.refused("it exists already; choose another name") }
            throw ContainerError.io(path: path, operation: "cannot create", errno: errno)
        }
    }

    private static func currentUmask() -> mode_t {
        let mask = umask(0o022)
        umask(mask)
        return mask
    }

    /// Drops the secret an unlocker holds as soon as the command is done with it.
    static func wipe(_ unlocker: Unlocker) {
        switch unlocker {
        case .symmetricKey(let secret, _), .password(let secret, _): secret.wipe()
        case .key: break
        }
    }
}

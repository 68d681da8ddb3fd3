import ASiC
import XAdES
import Foundation

let createCommand = Command(
    name: "create",
    synopsis: "create CONTAINER [-r] [FILE...]",
    summary: "make a new container with these data files",
    details: """
    Each FILE is stored under its base name, with a media type guessed from the name. With -r
    a FILE may be a folder: every file under it is stored as FOLDER/SUB/NAME, as a mount shows
    folders (a folder without -r is refused).
    With no FILE the container is empty (files can be added later). An existing
    non-empty CONTAINER is never overwritten.
    """,
    options: [SourceFiles.recursiveOption, jsonOption],
    run: { arguments, context in
        try requirePositionals(arguments, atLeast: 1, "CONTAINER")
        let path = arguments.positionals[0]
        let files = try SourceFiles.expand(Array(arguments.positionals.dropFirst()), recursive: arguments.has("--recursive"))
        let progress = ProgressLine("creating \(path)", quiet: context.quiet)
        defer { progress.finish() }
        let container = try Container.create(at: path, files: files, progress: progress.update)
        progress.finish()
        if arguments.has("--json") {
            CommandJSON.success("create", container: path, ["data_files": CommandJSON.dataFiles(container.dataFiles)])
        } else if !context.quiet {
            Terminal.out("created \(path) with \(container.dataFiles.count) data file\(container.dataFiles.count == 1 ? "" : "s")")
        }
        return 0
    })

let addCommand = Command(
    name: "add",
    synopsis: "add CONTAINER [-r] FILE...",
    summary: "add data files to an unsigned container",
    details: """
    Each FILE is stored under its base name; with -r a FILE may be a folder, stored with
    everything under it as FOLDER/SUB/NAME (as a mount shows folders). A name that is already in the container is an
    error unless --replace is given. A signed container cannot be changed. The container is
    replaced atomically: if anything fails it stays exactly as it was. A write-protected
    container (chmod a-w) is refused, as zip does, unless --force.
    """,
    options: [SourceFiles.recursiveOption,
              OptionSpec(names: ["--replace"], takesValue: false, help: "replace data files of the same name"),
              OptionSpec(names: ["--mime"], takesValue: true, help: "media type of the files added (instead of a guess from the name)"),
              WriteProtection.forceOption, jsonOption],
    run: { arguments, context in
        try requirePositionals(arguments, atLeast: 2, "FILE to add")
        let path = arguments.positionals[0]
        let mediaType = try arguments.value("--mime").map(checkedMediaType)
        try WriteProtection.check(path, force: arguments.has("--force"))
        let lock = try lockForChange(path)
        defer { lock.release() }
        let files = try SourceFiles.expand(Array(arguments.positionals.dropFirst()), recursive: arguments.has("--recursive"),
                                           mediaType: mediaType)
        var edit = try Container.open(path).edit()
        for file in files { try edit.add(file, replacing: arguments.has("--replace")) }
        let progress = ProgressLine("adding to \(path)", quiet: context.quiet)
        defer { progress.finish() }
        let saved = try edit.save(progress: progress.update)
        if arguments.has("--json") {
            CommandJSON.success("add", container: path, ["added": CommandJSON.names(files.map(\.name)),
                                                         "data_files": CommandJSON.dataFiles(saved.dataFiles)])
        }
        return 0
    })

/// `--mime TYPE` (digidoc-tool's option): a `type/subtype` media type, checked before anything is written.
func checkedMediaType(_ value: String) throws -> String {
    let parts = value.split(separator: "/", omittingEmptySubsequences: false)
    let token: (Character) -> Bool = { $0.isASCII && ($0.isLetter || $0.isNumber || "!#$&^_.+-".contains($0)) }
    guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(token) }) else {
        throw UsageError("--mime takes a media type such as text/plain or application/pdf, not '\(value)'")
    }
    return value
}

let removeCommand = Command(
    name: "remove",
    synopsis: "remove CONTAINER (NAME... | --signature N)",
    summary: "remove data files from an unsigned container, or one signature",
    details: """
    NAME is the data file's name in the container, as 'asicfs ls' shows it. With --signature N,
    signature N (counted from 0, as 'asicfs verify' numbers them) is removed instead, with its
    signature file (as digidoc-tool remove --signature does); the data files stay. A signature
    file that holds several signatures is removed only whole, so such a signature is refused.
    A write-protected container (chmod a-w) is refused, as zip does, unless --force.
    """,
    options: [OptionSpec(names: ["--signature"], takesValue: true, help: "remove signature N (from 0) instead of data files"),
              WriteProtection.forceOption, jsonOption],
    run: { arguments, context in
        if let path = arguments.positionals.first { try WriteProtection.check(path, force: arguments.has("--force")) }
        if let index = arguments.value("--signature") {
            try requirePositionals(arguments, atLeast: 1, "CONTAINER")
            if arguments.positionals.count > 1 { throw UsageError("remove --signature takes CONTAINER only, not data file names") }
            guard let number = Int(index), number >= 0 else { throw UsageError("--signature takes a signature number (0, 1, ...), not '\(index)'") }
            let file = try SignatureRemoval.remove(number, from: arguments.positionals[0])
            if arguments.has("--json") {
                CommandJSON.success("remove", container: arguments.positionals[0], ["removed_signature": .number(number), "signature_file": .text(file)])
            }
            return 0
        }
        try requirePositionals(arguments, atLeast: 2, "NAME to remove")
        let path = arguments.positionals[0]
        let lock = try lockForChange(path)
        defer { lock.release() }
        var edit = try Container.open(path).edit()
        for name in arguments.positionals.dropFirst() { try edit.remove(name) }
        let progress = ProgressLine("saving \(path)", quiet: context.quiet)
        defer { progress.finish() }
        let saved = try edit.save(progress: progress.update)
        if arguments.has("--json") {
            CommandJSON.success("remove", container: path, ["removed": CommandJSON.names(Array(arguments.positionals.dropFirst())),
                                                            "data_files": CommandJSON.dataFiles(saved.dataFiles)])
        }
        return 0
    })

/// `asicfs remove C --signature N`: the signature file of signature N goes, atomically; the
/// same rules as `echo remove > .asicfs/signatures/N-…/remove` in a mount.
enum SignatureRemoval {
    @discardableResult
    static func remove(_ index: Int, from path: String) throws -> String {
        let lock = try lockForChange(path)
        defer { lock.release() }
        let container = try Container.open(path)
        guard container.kind == .asicE else {
            throw ContainerError.refused("cannot remove a signature: this is an ASiC-S container, whose signature or time-stamp is part of its format")
        }
        let signatures = container.signatureFiles.flatMap { file in
            SignatureSummary.read(file: file.name, bytes: (try? container.signatureBytes(file)) ?? [])
        }
        guard index < signatures.count else {
            throw ContainerError.refused("there is no signature \(index): the container has \(signatures.count) (numbered from 0, as asicfs verify shows them)")
        }
        let file = signatures[index].file
        let sharing = signatures.filter { $0.file == file }.count
        if sharing > 1 {
            throw ContainerError.refused("cannot remove signature \(index): \(file) holds \(sharing) signatures and asicfs removes whole signature files only (that would remove the other \(sharing - 1) too)")
        }
        _ = try container.savingSignatures(adding: [], removing: [file])
        return file
    }
}

import ASiC
import Foundation

let listCommand = Command(
    name: "ls",
    synopsis: "ls CONTAINER [--json]",
    summary: "list data files and signatures (or an encrypted file's recipients)",
    details: """
    The table shows size, modification time (local), media type and name of each data file,
    then the signature files. --json prints one JSON object (asicfs(1) JSON OUTPUT).
    An encrypted container (.cdoc, .cdoc2; told by content) shows its format, its recipients
    (kind, certificate subject or key label) and the files its header lists; no key is needed.
    """,
    options: [jsonOption],
    run: { arguments, _ in
        try requirePositionals(arguments, atLeast: 1, "CONTAINER")
        if arguments.positionals.count > 1 { throw UsageError("ls takes one CONTAINER") }
        if let encrypted = try EncryptedListing.openIfEncrypted(arguments.positionals[0]) {
            if arguments.has("--json") {
                let size = (try? FileManager.default.attributesOfItem(atPath: arguments.positionals[0])[.size] as? Int) ?? 0
                CommandJSON.success("ls", container: arguments.positionals[0], EncryptedListing.jsonFields(encrypted, size: size))
            } else {
                Terminal.out(EncryptedListing.table(encrypted, path: arguments.positionals[0]))
            }
            return 0
        }
        let container = try Container.open(arguments.positionals[0])
        if arguments.has("--json") {
            CommandJSON.success("ls", container: arguments.positionals[0], ContainerListing.jsonFields(container))
        } else {
            Terminal.out(ContainerListing.table(container))
        }
        return 0
    })

/// How `ls` shows a container. The JSON keys are a stable interface (docs/json-schema.json):
/// new keys may be added, existing ones never change meaning without a new `format_version`.
enum ContainerListing {
    /// The fields of `ls --json` beside the envelope (`CommandJSON`).
    static func jsonFields(_ container: Container) -> [String: CommandJSON.Value] {
        ["format": .text(container.kind.rawValue), "mimetype": .text(container.kind.mediaType),
         "size": .number(Int(container.fileSize)), "signed": .flag(container.isSigned),
         "data_files": CommandJSON.dataFiles(container.dataFiles),
         "signatures": .list(container.signatureFiles.map { .object(["file": .text($0.name), "size": .number(Int($0.size))]) })]
    }

    /// One line per data file and per signature file: every field from the container is escaped
    /// (`PrintableText`) before it is laid out, so no name or media type can add a line.
    static func table(_ container: Container) -> String {
        let count = container.dataFiles.count
        let state = container.isSigned
            ? "signed (\(container.signatureFiles.count) signature file\(container.signatureFiles.count == 1 ? "" : "s"))"
            : "not signed"
        let path = PrintableText.escaped(container.path)
        var lines = ["\(path): \(container.kind.rawValue), \(count) data file\(count == 1 ? "" : "s"), \(state)"]
        let sizes = container.dataFiles.map { String($0.size) }
        let types = container.dataFiles.map { PrintableText.escaped($0.mediaType) }
        let sizeWidth = max(4, sizes.map(\.count).max() ?? 0)
        let typeWidth = max(10, types.map(\.count).max() ?? 0)
        let dates = LocalDates()
        lines.reserveCapacity(1 + count + container.signatureFiles.count)
        for (index, file) in container.dataFiles.enumerated() {
            let size = String(repeating: " ", count: sizeWidth - sizes[index].count) + sizes[index]
            let type = types[index] + String(repeating: " ", count: typeWidth - types[index].count)
            lines.append("  \(size)  \(dates.string(file.modified))  \(type)  \(PrintableText.escaped(file.name))")
        }
        for signature in container.signatureFiles {
            lines.append("  signature: \(PrintableText.escaped(signature.name)) (\(signature.size) bytes)")
        }
        return lines.joined(separator: "\n")
    }
}

import ASiC
import Foundation

let listCommand = Command(
    name: "ls",
    synopsis: "ls CONTAINER [--json]",
    summary: "list data files and signatures",
    details: """
    The table shows size, modification time (local), media type and name of each data file,
    then the signature files. --json prints one JSON object (schema in asicfs(1)).
    """,
    options: [OptionSpec(names: ["--json"], takesValue: false, help: "print JSON instead of a table")],
    run: { arguments, _ in
        try requirePositionals(arguments, atLeast: 1, "CONTAINER")
        if arguments.positionals.count > 1 { throw UsageError("ls takes one CONTAINER") }
        let container = try Container.open(arguments.positionals[0])
        Terminal.out(arguments.has("--json") ? ContainerListing.json(container) : ContainerListing.table(container))
        return 0
    })

/// How `ls` shows a container. The JSON keys are a stable interface (snake_case, as in every
/// JSON asicfs prints, with `format_version`): new keys may be added, existing ones never
/// change meaning without a new `format_version`.
enum ContainerListing {
    struct JSONDataFile: Encodable {
        let name: String
        let size: Int64
        let compressedSize: Int64
        let compression: String
        let mediaType: String
        let modified: String
    }

    struct JSONSignature: Encodable {
        let file: String
        let size: Int64
    }

    struct JSONContainer: Encodable {
        var formatVersion = JSONFormat.version
        let container: String
        let format: String
        let mimetype: String
        let size: Int64
        let signed: Bool
        let dataFiles: [JSONDataFile]
        let signatures: [JSONSignature]
    }

    static func json(_ container: Container) -> String {
        let value = JSONContainer(
            container: container.path, format: container.kind.rawValue, mimetype: container.kind.mediaType,
            size: container.fileSize, signed: container.isSigned,
            dataFiles: container.dataFiles.map {
                JSONDataFile(name: $0.name, size: $0.size, compressedSize: $0.compressedSize,
                             compression: $0.isCompressed ? "deflate" : "stored", mediaType: $0.mediaType,
                             modified: Format.isoDate($0.modified))
            },
            signatures: container.signatureFiles.map { JSONSignature(file: $0.name, size: $0.size) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return PrintableText.jsonSafe(String(decoding: try! encoder.encode(value), as: UTF8.self))
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

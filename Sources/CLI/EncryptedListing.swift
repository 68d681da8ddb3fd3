import ASiC
import CDOC
import Foundation
import Glibc

/// `asicfs ls` of an encrypted container (CDOC 1.x, CDOC2): told from a signed one by content,
/// shown without any secret: the format, the recipients and the files the header lists.
enum EncryptedListing {
    /// The reader when `path` is an encrypted container; nil when it is something else (a ZIP
    /// container, or XML that is not ENCDOC-XML, such as a DDOC), which `ls` then opens as before.
    static func openIfEncrypted(_ path: String) throws -> EncryptedContainerReader? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var prefix = [UInt8](repeating: 0, count: 4096)
        let count = prefix.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0, let family = EncryptedFormat.family(ofPrefix: Array(prefix[..<count])) else { return nil }
        if family == .xml, !String(decoding: prefix[..<count], as: UTF8.self).contains("EncryptedData") { return nil }
        return try EncryptedContainer.open(descriptor: descriptor)
    }

    static func mediaType(_ format: EncryptedFormat) -> String {
        format == .cdoc2 ? "application/x-cdoc2" : "application/x-cdoc"
    }

    /// The fields of `ls --json` beside the envelope; the keys every `ls` has, plus `encrypted` and `recipients`.
    static func jsonFields(_ reader: EncryptedContainerReader, size: Int) -> [String: CommandJSON.Value] {
        ["format": .text(reader.format.rawValue), "mimetype": .text(mediaType(reader.format)), "size": .number(size),
         "signed": .flag(false), "encrypted": .flag(true), "signatures": .list([]),
         "data_files": .list(reader.listedFiles.map { file in
             var fields: [String: CommandJSON.Value] = ["name": .text(file.name)]
             if let size = file.size { fields["size"] = .number(Int(size)) }
             return .object(fields)
         }),
         "recipients": .list(reader.recipients.map { recipient in
             var fields: [String: CommandJSON.Value] = ["kind": .text(recipient.kind.rawValue), "subject": .text(recipient.certificate?.subjectLine ?? ""),
                                                         "label": .text(recipient.label), "name": .text(recipient.displayName)]
             if let server = recipient.keyServerID { fields["key_server"] = .text(server) }
             return .object(fields)
         })]
    }

    static func table(_ reader: EncryptedContainerReader, path: String) -> String {
        let files = reader.listedFiles
        let recipients = reader.recipients
        var lines = ["\(PrintableText.escaped(path)): \(reader.format.rawValue), encrypted for \(recipients.count) "
            + "recipient\(recipients.count == 1 ? "" : "s"), \(files.count) listed file\(files.count == 1 ? "" : "s")"]
        for recipient in recipients {
            let server = recipient.keyServerID.map { "  (needs the key server \(PrintableText.escaped($0)), which asicfs does not contact)" } ?? ""
            lines.append("  recipient: \(recipient.kind.rawValue)  \(PrintableText.escaped(recipient.displayName))\(server)")
        }
        for file in files {
            let size = file.size.map(String.init) ?? "?"
            lines.append("  \(String(repeating: " ", count: max(0, 10 - size.count)))\(size)  \(PrintableText.escaped(file.name))")
        }
        return lines.joined(separator: "\n")
    }
}

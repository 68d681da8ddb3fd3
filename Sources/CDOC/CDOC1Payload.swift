import Crypto
import Foundation
import SafeXML

/// The decrypted payload of a CDOC 1.x file turned into files: the cipher (CBC with its double
/// padding, or GCM), libdigidoc's optional zlib layer, and the DDOC 1.3 wrapper of several files.
/// A single plain file streams; a DDOC or zlib payload is checked whole before anything is handed on.
enum CDOC1Payload {
    struct File {
        var name: String
        var bytes: [UInt8]
    }

    /// A DDOC or zlib payload is decrypted into memory up to this size, then unpacked; a single
    /// plain file (what asicfs and DigiDoc4 write) streams to the sink with no limit.
    static let bufferedLimit = 512 << 20

    /// Decrypts the payload read again from `descriptor` with the transport key into `sink`.
    static func decrypt(_ document: CDOC1Document, from descriptor: Int32, key: SecretBytes, into sink: PlainFileSink,
                        limit: Int = bufferedLimit) throws {
        let gcm = try checkCipher(document, key: key)
        if let name = try streamedFileName(document) {
            do {
                try sink.begin(name: name, size: gcm ? document.payloadLength - Int64(AESGCM.ivLength + AESGCM.tagLength) : nil)
                let decryptor = CDOC1PayloadDecryptor(gcm: gcm, key: key) { try sink.write($0) }
                _ = try CDOC1Stream.read(descriptor, payload: decryptor.take)
                try decryptor.finish()
                try sink.end()
            } catch {
                sink.abandon()
                throw error
            }
            return
        }
        var plain: [UInt8] = []
        defer { SecretBytes.zero(&plain) }
        let decryptor = CDOC1PayloadDecryptor(gcm: gcm, key: key) { bytes in
            guard plain.count + bytes.count <= limit else {
                throw CDOCError(.limit, "a DDOC or compressed CDOC 1.x payload larger than \(limit >> 20) MiB is not read")
            }
            plain += bytes
        }
        _ = try CDOC1Stream.read(descriptor, payload: decryptor.take)
        try decryptor.finish()
        try deliver(try files(of: document, plain: plain, limit: limit), to: sink)
    }

    /// The file's name when the payload is one plain file (neither zlib nor a DDOC), checked.
    static func streamedFileName(_ document: CDOC1Document) throws -> String? {
        guard document.mimeType != CDOC1Names.zlibMimeType else { return nil }
        if let type = document.mimeType, CDOC1Names.ddocMimeTypes.contains(type) { return nil }
        return try fileName(document)
    }

    private static func fileName(_ document: CDOC1Document) throws -> String {
        guard let name = document.property("Filename") ?? document.properties.first(where: { $0.name == "orig_file" })
            .map({ String($0.value.split(separator: "|", omittingEmptySubsequences: false).first ?? "") }) else {
            throw CDOCError(.malformed, "the file's name is missing (no Filename property)")
        }
        try SafeFileName.check(name)
        return name
    }

    /// The files of a payload decrypted into memory (zlib and/or DDOC).
    static func files(of document: CDOC1Document, plain decrypted: [UInt8], limit: Int) throws -> [File] {
        var plain = decrypted
        defer { SecretBytes.zero(&plain) }
        if document.mimeType == CDOC1Names.zlibMimeType {
            let declared = document.property("OriginalSize").flatMap { Int($0) }
            plain = try ZlibInflater.inflate(plain, limit: min(declared ?? limit, limit))
        }
        let realType = document.mimeType == CDOC1Names.zlibMimeType ? document.property("OriginalMimeType") : document.mimeType
        if let realType, CDOC1Names.ddocMimeTypes.contains(realType) {
            return try ddocFiles(plain)
        }
        return [File(name: try fileName(document), bytes: plain)]
    }

    /// True for GCM; throws when the cipher, the key or the payload's length cannot be right.
    static func checkCipher(_ document: CDOC1Document, key: SecretBytes) throws -> Bool {
        guard let cipher = CDOC1Names.payloadCipher(document.payloadMethod) else {
            throw CDOCError(.unsupported, "the payload cipher \(document.payloadMethod) is not one CDOC 1.x uses")
        }
        guard key.count == cipher.keyLength else {
            throw CDOCError(.wrongKey, "the decrypted key has the wrong length for \(document.payloadMethod) (wrong key or changed file)")
        }
        let length = document.payloadLength
        if cipher.gcm {
            guard length >= Int64(AESGCM.ivLength + AESGCM.tagLength) else { throw CDOCError(.malformed, "the encrypted payload is truncated") }
        } else {
            guard length >= Int64(2 * AES.blockSize), length % Int64(AES.blockSize) == 0 else {
                throw CDOCError(.malformed, "the encrypted payload is truncated")
            }
        }
        return cipher.gcm
    }

    /// The files of a DDOC 1.3 `SignedDoc`: every `DataFile` is EMBEDDED_BASE64 with a safe, unique name.
    static func ddocFiles(_ bytes: [UInt8]) throws -> [File] {
        let xml: SafeXMLDocument
        do { xml = try SafeXMLDocument.parse(bytes, name: "ddoc", largeText: true) } catch let error as XMLError {
            throw CDOCError(.malformed, "the decrypted DDOC is not readable: \(error.reason)")
        }
        guard let root = xml.root, root.localName == "SignedDoc" else {
            throw CDOCError(.malformed, "the decrypted payload is not a DDOC (no SignedDoc)")
        }
        let entries = CDOC1Document.children(root, "DataFile")
        if entries.isEmpty { throw CDOCError(.malformed, "the decrypted DDOC holds no files") }
        var files: [File] = []
        for (index, entry) in entries.enumerated() {
            guard let name = entry.attribute("Filename", namespace: nil) else {
                throw CDOCError(.malformed, "file \(index + 1) of the DDOC has no name (Filename)")
            }
            let contentType = entry.attribute("ContentType", namespace: nil) ?? "EMBEDDED_BASE64"
            guard contentType == "EMBEDDED_BASE64" else {
                throw CDOCError(.unsupported, "file \(index + 1) of the DDOC is \(contentType), not EMBEDDED_BASE64")
            }
            files.append(File(name: name, bytes: try CDOC1Document.base64(entry, "file \(index + 1) of the DDOC")))
        }
        try SafeFileName.checkAll(files.map(\.name))
        return files
    }

    /// Hands every file to the sink; on any failure the sink drops all of them.
    static func deliver(_ files: [File], to sink: PlainFileSink) throws {
        do {
            for file in files {
                try sink.begin(name: file.name, size: Int64(file.bytes.count))
                try file.bytes.withUnsafeBytes { try sink.write($0) }
                try sink.end()
            }
        } catch {
            sink.abandon()
            throw error
        }
    }
}

/// CDOC 1.0's own padding under PKCS#7 (spec §1.2): ANSI X9.23, `00…00 N` to a whole block, a
/// full block when the data is already whole blocks.
enum CDOC1Padding {
    /// Removes X9.23 padding only where it is unmistakable (last byte N in 1…16 and the N−1 bytes before it zero).
    static func removeX923(_ data: inout [UInt8]) {
        guard let last = data.last, (1...16).contains(last), data.count >= Int(last) else { return }
        let start = data.count - Int(last)
        guard data[start..<(data.count - 1)].allSatisfy({ $0 == 0 }) else { return }
        data.removeSubrange(start...)
    }

    static func addX923(_ data: inout [UInt8]) {
        let count = 16 - data.count % 16
        data += [UInt8](repeating: 0, count: count - 1) + [UInt8(count)]
    }
}

import Crypto
import Foundation
import Glibc
import SafeXML

/// Writes CDOC 1.1 as DigiDoc4 (libcdoc) does: AES-256-GCM, one `EncryptedKey` per recipient
/// certificate (RSA PKCS#1 v1.5, EC ECDH-ES + ConcatKDF + kw-aes256), the file itself for one
/// file and a DDOC 1.3 for several; or CDOC 1.0 (AES-128-CBC, RSA only) as libdigidoc wrote it.
public struct CDOC1Writer: EncryptedContainerWriter {
    public let format: EncryptedFormat

    public init(format: EncryptedFormat) { self.format = format == .cdoc10 ? .cdoc10 : .cdoc11 }

    var documentFormat: String { format == .cdoc10 ? "ENCDOC-XML|1.0" : "ENCDOC-XML|1.1" }

    public func write(files: [PlainFileSource], for recipients: [RecipientSpec], to descriptor: Int32) throws {
        if files.isEmpty { throw CDOCError(.malformed, "nothing to encrypt: no files") }
        if recipients.isEmpty { throw CDOCError(.noRecipient, "no recipients: give at least one certificate") }
        let certificates = try recipients.map { spec -> Certificate in
            guard case .certificate(let certificate) = spec else {
                throw CDOCError(.unsupported, "\(format.rawValue) encrypts for certificates only (keys, secrets and passwords need CDOC2)")
            }
            if format == .cdoc10, certificate.publicKey?.isRSA != true {
                throw CDOCError(.unsupported, "CDOC 1.0 encrypts for RSA certificates only, not \(certificate.subjectLine) (use CDOC 1.1)")
            }
            return certificate
        }
        try SafeFileName.checkAll(files.map(\.name))
        var contents = try files.map { try Self.readAll($0) }
        defer { for index in contents.indices { SecretBytes.zero(&contents[index]) } }
        var payload = files.count == 1 ? contents[0] : DDOCBuilder.document(names: files.map(\.name), contents: contents)
        defer { SecretBytes.zero(&payload) }

        let transportKey = try SecureRandom.secret(format == .cdoc10 ? 16 : 32)
        defer { transportKey.wipe() }
        let encrypted: [UInt8]
        if format == .cdoc10 {
            CDOC1Padding.addX923(&payload)
            let iv = try SecureRandom.bytes(AES.blockSize)
            encrypted = iv + (try AESCBCPadded.encrypt(key: transportKey, iv: iv, payload))
        } else {
            let iv = try SecureRandom.bytes(AESGCM.ivLength)
            let sealed = try AESGCM.seal(key: transportKey, iv: iv, payload)
            encrypted = iv + sealed.ciphertext + sealed.tag
        }
        var xml = CDOC1XML(documentFormat: documentFormat)
        xml.open(mimeType: files.count == 1 ? "application/octet-stream" : "http://www.sk.ee/DigiDoc/v1.3.0/digidoc.xsd",
                 method: format == .cdoc10 ? CDOC1Names.aes128CBC : CDOC1Names.aes256GCM)
        for certificate in certificates {
            xml.encryptedKey(for: certificate, try CDOC1KeyTransport.wrap(transportKey, for: certificate, documentFormat: documentFormat))
        }
        xml.payload(encrypted)
        var properties = [("LibraryVersion", "asicfs|1.0"), ("DocumentFormat", documentFormat),
                          ("Filename", files.count == 1 ? files[0].name : "tmp.ddoc")]
        for (index, file) in files.enumerated() {
            properties.append(("orig_file", "\(file.name)|\(contents[index].count)|application/octet-stream|D\(index)"))
        }
        xml.close(properties: properties)
        try Self.writeAll(xml.bytes, to: descriptor)
    }

    static func readAll(_ source: PlainFileSource) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(max(0, min(source.size, 1 << 30))))
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        defer { SecretBytes.zero(&chunk) }
        while true {
            let count = try chunk.withUnsafeMutableBytes { try source.read(into: $0) }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > 1 << 30 { throw CDOCError(.limit, "CDOC 1.x holds at most 1 GiB of files (use CDOC2)") }
        }
    }

    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw CDOCError(.io, "cannot write the encrypted file: \(String(cString: strerror(errno)))") }
            offset += written
        }
    }
}

/// The DDOC 1.3 wrapper of several files, as libcdoc's DDocWriter writes it.
enum DDOCBuilder {
    static func document(names: [String], contents: [[UInt8]]) -> [UInt8] {
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<SignedDoc xmlns=\"\(CDOC1Names.ddocNamespace)\" format=\"DIGIDOC-XML\" version=\"1.3\">\n"
        var bytes = Array(text.utf8)
        for (index, name) in names.enumerated() {
            text = "<DataFile ContentType=\"EMBEDDED_BASE64\" Filename=\"\(XMLText.escaped(name, inAttribute: true))\" Id=\"D\(index)\" "
                + "MimeType=\"application/octet-stream\" Size=\"\(contents[index].count)\">"
            bytes += Array(text.utf8)
            bytes += Array(Data(contents[index]).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed]).utf8)
            bytes += Array("</DataFile>\n".utf8)
        }
        bytes += Array("</SignedDoc>\n".utf8)
        return bytes
    }
}

import Crypto
import Foundation
import SafeXML
@testable import CDOC

/// The CDOC 1.x writer as it was before it streamed: every file read whole, the DDOC built in
/// memory, the payload sealed at once and base64-encoded by Foundation. Kept here only as the
/// reference the streaming writer must match byte for byte.
enum CDOC1ReferenceWriter {
    static func document(files: [(name: String, bytes: [UInt8])], for certificates: [Certificate], format: EncryptedFormat,
                         key transportKey: SecretBytes, iv: [UInt8]) throws -> [UInt8] {
        let documentFormat = format == .cdoc10 ? "ENCDOC-XML|1.0" : "ENCDOC-XML|1.1"
        var payload = files.count == 1 ? files[0].bytes : DDOCBuilder.document(names: files.map(\.name), contents: files.map(\.bytes))
        let encrypted: [UInt8]
        if format == .cdoc10 {
            let count = 16 - payload.count % 16
            payload += [UInt8](repeating: 0, count: count - 1) + [UInt8(count)]
            encrypted = iv + (try AESCBCPadded.encrypt(key: transportKey, iv: iv, payload))
        } else {
            let sealed = try AESGCM.seal(key: transportKey, iv: iv, payload)
            encrypted = iv + sealed.ciphertext + sealed.tag
        }
        var xml = CDOC1XML(documentFormat: documentFormat)
        xml.open(mimeType: files.count == 1 ? "application/octet-stream" : "http://www.sk.ee/DigiDoc/v1.3.0/digidoc.xsd",
                 method: format == .cdoc10 ? CDOC1Names.aes128CBC : CDOC1Names.aes256GCM)
        for certificate in certificates {
            xml.encryptedKey(for: certificate, try CDOC1KeyTransport.wrap(transportKey, for: certificate, documentFormat: documentFormat))
        }
        var bytes = xml.take()
        bytes += Array("</ds:KeyInfo>\n<denc:CipherData><denc:CipherValue>".utf8)
        bytes += Array(Data(encrypted).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed]).utf8)
        bytes += Array("</denc:CipherValue></denc:CipherData>\n".utf8)
        var properties = [("LibraryVersion", "asicfs|1.0"), ("DocumentFormat", documentFormat),
                          ("Filename", files.count == 1 ? files[0].name : "tmp.ddoc")]
        for (index, file) in files.enumerated() {
            properties.append(("orig_file", "\(file.name)|\(file.bytes.count)|application/octet-stream|D\(index)"))
        }
        var tail = CDOC1XML(documentFormat: documentFormat)
        tail.close(properties: properties)
        return bytes + tail.take()
    }
}

/// The DDOC 1.3 wrapper of several files, as libcdoc's DDocWriter writes it (built whole).
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

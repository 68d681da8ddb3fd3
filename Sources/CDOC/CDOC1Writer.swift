import Crypto
import SafeXML

/// Writes CDOC 1.1 as DigiDoc4 (libcdoc) does: AES-256-GCM, one `EncryptedKey` per recipient
/// certificate (RSA PKCS#1 v1.5, EC ECDH-ES + ConcatKDF + kw-aes256), the file itself for one
/// file and a DDOC 1.3 for several; or CDOC 1.0 (AES-128-CBC, RSA only) as libdigidoc wrote it.
/// Streams with bounded memory: the XML head, then the payload encrypted and base64-encoded as
/// the files are read, then the tail. On a failure part of a file may have been written; the
/// caller removes it (it writes to an unnamed or temporary file).
public struct CDOC1Writer: EncryptedContainerWriter {
    public let format: EncryptedFormat
    /// Tests only: the transport key and IV instead of fresh random ones, for byte-exact output.
    var fixedKeyAndIV: (key: SecretBytes, iv: [UInt8])?

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
        // Other readers hold a CDOC 1.x whole in memory.
        if files.contains(where: { $0.size > 1 << 30 }) { throw CDOCError(.limit, "CDOC 1.x holds at most 1 GiB of files (use CDOC2)") }

        let transportKey = try fixedKeyAndIV?.key ?? SecureRandom.secret(format == .cdoc10 ? 16 : 32)
        defer { transportKey.wipe() }
        let iv = try fixedKeyAndIV?.iv ?? SecureRandom.bytes(format == .cdoc10 ? AES.blockSize : AESGCM.ivLength)
        // Every key is wrapped before anything is written.
        var xml = CDOC1XML(documentFormat: documentFormat)
        xml.open(mimeType: files.count == 1 ? "application/octet-stream" : "http://www.sk.ee/DigiDoc/v1.3.0/digidoc.xsd",
                 method: format == .cdoc10 ? CDOC1Names.aes128CBC : CDOC1Names.aes256GCM)
        for certificate in certificates {
            xml.encryptedKey(for: certificate, try CDOC1KeyTransport.wrap(transportKey, for: certificate, documentFormat: documentFormat))
        }
        xml.openPayload()
        let output = DescriptorOutput(descriptor)
        try output.write(xml.take())

        let text = CDOC1Base64Lines(output: output.write)
        try text.add(iv)
        let cipher = try AESStreamEncryption(format == .cdoc10 ? .cbcPadded : .gcm, key: transportKey, iv: iv)
        var plainCount: Int64 = 0
        let encrypt: (UnsafeRawBufferPointer) throws -> Void = { plain in
            plainCount += Int64(plain.count)
            try cipher.update(plain, output: text.add)
        }
        try CDOC1PlainPayload.produce(files, into: encrypt)
        if format == .cdoc10 {
            // libdigidoc's X9.23 padding, then the cipher's own PKCS#7 block.
            try CDOC1Padding.x923(after: plainCount).withUnsafeBytes(encrypt)
        }
        if let tag = try cipher.finish(output: text.add) { try text.add(tag) }
        try text.finish()

        xml.closePayload()
        var properties = [("LibraryVersion", "asicfs|1.0"), ("DocumentFormat", documentFormat),
                          ("Filename", files.count == 1 ? files[0].name : "tmp.ddoc")]
        for (index, file) in files.enumerated() {
            properties.append(("orig_file", "\(file.name)|\(file.size)|application/octet-stream|D\(index)"))
        }
        xml.close(properties: properties)
        try output.write(xml.take())
    }
}

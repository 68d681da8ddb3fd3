import Crypto
import Glibc
import SafeXML

/// Reads a CDOC 1.0/1.1 file: the recipients and listed files without a key, the files with one.
/// The whole payload is one base64 node of the XML: it is streamed (`CDOC1Stream`), once to read
/// the document (the payload skipped), and again to decrypt it into the sink, so memory stays bounded.
public final class CDOC1Reader: EncryptedContainerReader {
    let document: CDOC1Document
    /// A duplicate of the caller's descriptor, read again by `decrypt` (so the reader outlives it).
    let descriptor: Int32
    public let format: EncryptedFormat
    public let recipients: [Recipient]

    public init(descriptor: Int32) throws {
        self.descriptor = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard self.descriptor >= 0 else { throw CDOCError(.io, "cannot read the file: \(String(cString: strerror(errno)))") }
        do {
            document = try CDOC1Document.parse(try CDOC1Stream.read(self.descriptor, payload: nil).0)
            guard let cipher = CDOC1Names.payloadCipher(document.payloadMethod) else {
                throw CDOCError(.unsupported, "the payload cipher \(document.payloadMethod) is not one CDOC 1.x uses")
            }
            format = document.property("DocumentFormat") == "ENCDOC-XML|1.0" || !cipher.gcm ? .cdoc10 : .cdoc11
        } catch {
            close(self.descriptor)
            throw error
        }
        recipients = document.keys.map { key in
            let subject = key.certificate.subjectLine
            return Recipient(kind: key.agreement == nil ? .rsaCertificate : .ecCertificate, label: key.recipientText,
                             displayName: subject.isEmpty ? key.recipientText : subject, certificate: key.certificate,
                             publicKey: try? key.certificate.publicKey?.rawKeyBytes())
        }
    }

    deinit { close(descriptor) }

    /// `orig_file` properties (`name|size|mime|id`; the name may hold `|`), else the `Filename` property.
    public var listedFiles: [(name: String, size: Int64?)] {
        let listed = document.properties.filter { $0.name == "orig_file" }.compactMap { property -> (String, Int64?)? in
            let fields = property.value.split(separator: "|", omittingEmptySubsequences: false)
            guard fields.count >= 4 else { return (property.value, nil) }
            return (fields.dropLast(3).joined(separator: "|"), Int64(fields[fields.count - 3]))
        }
        if !listed.isEmpty { return listed }
        return document.property("Filename").map { [($0, document.property("OriginalSize").flatMap { Int64($0) })] } ?? []
    }

    public func decrypt(with unlocker: Unlocker, into sink: PlainFileSink) throws {
        guard case .key(let key) = unlocker else {
            throw CDOCError(.noRecipient, "a CDOC 1.x file is encrypted for certificates only; a secret key or password cannot open it")
        }
        let transportKey = try CDOC1KeyTransport.unwrap(try recipients(for: key), with: key)
        defer { transportKey.wipe() }
        try CDOC1Payload.decrypt(document, from: descriptor, key: transportKey, into: sink)
    }

    /// The recipient `key` opens: the same certificate, or a certificate of the same public key.
    /// Several entries for one and the same certificate are one person listed twice (cdoc4j
    /// writes such files): they are all returned, to be tried in order. Different certificates
    /// that match are a choice asicfs does not make for the person.
    func recipients(for key: RecipientKey) throws -> [CDOC1Document.EncryptedKey] {
        let keyInfo = try? key.publicKey.subjectPublicKeyInfo()
        let matching = document.keys.filter { candidate in
            if let own = key.certificate, own.der == candidate.certificate.der { return true }
            guard let keyInfo, let theirs = try? candidate.certificate.publicKey?.subjectPublicKeyInfo() else { return false }
            return keyInfo == theirs
        }
        guard let first = matching.first else {
            throw CDOCError(.noRecipient, "\(key.name) is not one of the recipients (\(recipients.map(\.displayName).joined(separator: "; ")))")
        }
        guard matching.allSatisfy({ $0.certificate.der == first.certificate.der }) else {
            throw CDOCError(.severalRecipients, "\(key.name) matches several recipients: "
                + matching.map { $0.certificate.subjectLine }.joined(separator: "; "))
        }
        return matching
    }
}

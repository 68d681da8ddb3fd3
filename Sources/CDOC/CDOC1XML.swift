import Crypto
import Foundation
import SafeXML

/// The ENCDOC-XML text of a new CDOC 1.x file, element by element in libcdoc's order.
struct CDOC1XML {
    let documentFormat: String
    private(set) var bytes: [UInt8] = []

    init(documentFormat: String) { self.documentFormat = documentFormat }

    private mutating func add(_ text: String) { bytes += Array(text.utf8) }

    mutating func open(mimeType: String, method: String) {
        add("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        add("<denc:EncryptedData xmlns:denc=\"\(CDOC1Names.xmlenc)\" MimeType=\"\(XMLText.escaped(mimeType, inAttribute: true))\">\n")
        add("<denc:EncryptionMethod Algorithm=\"\(method)\"/>\n")
        add("<ds:KeyInfo xmlns:ds=\"\(CDOC1Names.xmldsig)\">\n")
    }

    mutating func encryptedKey(for certificate: Certificate, _ wrapped: CDOC1KeyTransport.Wrapped) {
        let recipient = XMLText.escaped(certificate.commonName ?? certificate.subjectLine, inAttribute: true)
        let certificateText = "<ds:X509Data><ds:X509Certificate>\(Self.base64(certificate.der))</ds:X509Certificate></ds:X509Data>"
        add("<denc:EncryptedKey Recipient=\"\(recipient)\">\n")
        switch wrapped {
        case .rsa(let cipherValue):
            add("<denc:EncryptionMethod Algorithm=\"\(CDOC1Names.rsa15)\"/>\n")
            add("<ds:KeyInfo>\(certificateText)</ds:KeyInfo>\n")
            add("<denc:CipherData><denc:CipherValue>\(Self.base64(cipherValue))</denc:CipherValue></denc:CipherData>\n")
        case .ec(let cipherValue, let curve, let senderPoint, let digest, let algorithmID):
            let curveURI = CDOC1Names.curveURIs.first { $0.value == curve }?.key ?? ""
            add("<denc:EncryptionMethod Algorithm=\"\(CDOC1Names.xmlenc)kw-aes256\"/>\n")
            add("<ds:KeyInfo><denc:AgreementMethod Algorithm=\"\(CDOC1Names.ecdhES)\">\n")
            add("<xenc11:KeyDerivationMethod xmlns:xenc11=\"\(CDOC1Names.xmlenc11)\" Algorithm=\"\(CDOC1Names.concatKDF)\">")
            add("<xenc11:ConcatKDFParams AlgorithmID=\"00\(CDOC1Hex.encode(algorithmID))\" PartyUInfo=\"00\(CDOC1Hex.encode(senderPoint))\" "
                + "PartyVInfo=\"00\(CDOC1Hex.encode(certificate.der))\">")
            add("<ds:DigestMethod Algorithm=\"\(CDOC1Names.digestURI(digest))\"/></xenc11:ConcatKDFParams></xenc11:KeyDerivationMethod>\n")
            add("<denc:OriginatorKeyInfo><ds:KeyValue><dsig11:ECKeyValue xmlns:dsig11=\"\(CDOC1Names.xmldsig11)\">")
            add("<dsig11:NamedCurve URI=\"\(curveURI)\"/><dsig11:PublicKey>\(Self.base64(senderPoint))</dsig11:PublicKey>")
            add("</dsig11:ECKeyValue></ds:KeyValue></denc:OriginatorKeyInfo>\n")
            add("<denc:RecipientKeyInfo>\(certificateText)</denc:RecipientKeyInfo>\n")
            add("</denc:AgreementMethod></ds:KeyInfo>\n")
            add("<denc:CipherData><denc:CipherValue>\(Self.base64(cipherValue))</denc:CipherValue></denc:CipherData>\n")
        }
        add("</denc:EncryptedKey>\n")
    }

    /// Up to where the payload's base64 begins; the writer streams the payload after `take()`.
    mutating func openPayload() { add("</ds:KeyInfo>\n<denc:CipherData><denc:CipherValue>") }

    mutating func closePayload() { add("</denc:CipherValue></denc:CipherData>\n") }

    /// A whole payload at once (documents made by hand in tests).
    mutating func payload(_ encrypted: [UInt8]) {
        openPayload()
        bytes += CDOC1Base64Lines.encode(encrypted)
        closePayload()
    }

    /// The text so far, handed on and forgotten.
    mutating func take() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }

    mutating func close(properties: [(String, String)]) {
        add("<denc:EncryptionProperties>\n")
        for (name, value) in properties {
            add("<denc:EncryptionProperty Name=\"\(XMLText.escaped(name, inAttribute: true))\">\(XMLText.escaped(value))</denc:EncryptionProperty>\n")
        }
        add("</denc:EncryptionProperties>\n</denc:EncryptedData>\n")
    }

    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}

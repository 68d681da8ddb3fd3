import Crypto
import Foundation
import SafeXML

/// A CDOC 1.x (ENCDOC-XML) document as parsed: everything but the decryption. Elements are
/// matched by local name (as libcdoc and DigiDoc4 read them); XML through SafeXML only.
struct CDOC1Document {
    /// One `EncryptedKey`: the transport key for one recipient certificate.
    struct EncryptedKey {
        var recipientText: String
        var method: String
        var certificate: Certificate
        var cipherValue: [UInt8]
        var agreement: Agreement?
    }

    /// ECDH-ES + ConcatKDF parameters of an EC recipient.
    struct Agreement {
        var curve: EllipticCurve
        var senderPoint: [UInt8]
        var digest: DigestAlgorithm
        var algorithmID: [UInt8], partyUInfo: [UInt8], partyVInfo: [UInt8]
    }

    var mimeType: String?
    var payloadMethod: String
    var keys: [EncryptedKey]
    var properties: [(name: String, value: String)]

    func property(_ name: String) -> String? { properties.first { $0.name == name }?.value }

    /// The payload's `CipherValue`, whose text `CDOC1Stream` diverts from the tree.
    static let payloadPath = ["EncryptedData", "CipherData", "CipherValue"]

    /// The document `xml`, parsed with the payload diverted (its text is streamed, never kept).
    static func parse(_ xml: SafeXMLDocument) throws -> CDOC1Document {
        guard let root = xml.root, root.localName == "EncryptedData" else {
            throw CDOCError(.malformed, "not a CDOC 1.x document (its root element is not EncryptedData)")
        }
        guard let method = child(root, "EncryptionMethod")?.attribute("Algorithm", namespace: nil) else {
            throw CDOCError(.malformed, "the document names no payload cipher (EncryptionMethod)")
        }
        guard let keyInfo = child(root, "KeyInfo") else { throw CDOCError(.malformed, "the document lists no recipients (KeyInfo)") }
        let keys = try children(keyInfo, "EncryptedKey").map(encryptedKey)
        if keys.isEmpty { throw CDOCError(.malformed, "the document lists no recipients (EncryptedKey)") }
        guard child(root, "CipherData").flatMap({ child($0, "CipherValue") }) != nil else {
            throw CDOCError(.malformed, "the document holds no encrypted payload (CipherData)")
        }
        var properties: [(String, String)] = []
        for group in children(root, "EncryptionProperties") {
            for property in children(group, "EncryptionProperty") {
                properties.append((property.attribute("Name", namespace: nil) ?? "", property.text))
            }
        }
        return CDOC1Document(mimeType: root.attribute("MimeType", namespace: nil), payloadMethod: method, keys: keys,
                             properties: properties)
    }

    private static func encryptedKey(_ element: XMLElement) throws -> EncryptedKey {
        let recipient = element.attribute("Recipient", namespace: nil) ?? ""
        guard let method = child(element, "EncryptionMethod")?.attribute("Algorithm", namespace: nil) else {
            throw CDOCError(.malformed, "a recipient names no key transport method")
        }
        guard let keyInfo = child(element, "KeyInfo") else { throw CDOCError(.malformed, "a recipient has no KeyInfo") }
        guard let value = child(element, "CipherData").flatMap({ child($0, "CipherValue") }) else {
            throw CDOCError(.malformed, "a recipient has no encrypted key (CipherValue)")
        }
        let cipherValue = try base64(value, "a recipient's encrypted key")
        if let agreementElement = child(keyInfo, "AgreementMethod") {
            let (agreement, certificate) = try agreementMethod(agreementElement)
            return EncryptedKey(recipientText: recipient, method: method, certificate: certificate, cipherValue: cipherValue, agreement: agreement)
        }
        guard let certificateElement = child(keyInfo, "X509Data").flatMap({ child($0, "X509Certificate") }) else {
            throw CDOCError(.malformed, "a recipient has no certificate")
        }
        return EncryptedKey(recipientText: recipient, method: method, certificate: try certificate(certificateElement),
                            cipherValue: cipherValue, agreement: nil)
    }

    private static func agreementMethod(_ element: XMLElement) throws -> (Agreement, Certificate) {
        guard element.attribute("Algorithm", namespace: nil) == CDOC1Names.ecdhES else {
            throw CDOCError(.unsupported, "a recipient uses a key agreement other than ECDH-ES")
        }
        guard let derivation = child(element, "KeyDerivationMethod"),
              derivation.attribute("Algorithm", namespace: nil) == CDOC1Names.concatKDF,
              let parameters = child(derivation, "ConcatKDFParams") else {
            throw CDOCError(.unsupported, "a recipient uses a key derivation other than ConcatKDF")
        }
        guard let digestURI = child(parameters, "DigestMethod")?.attribute("Algorithm", namespace: nil),
              let digest = CDOC1Names.digests[digestURI] else {
            throw CDOCError(.unsupported, "a recipient's ConcatKDF uses an unknown digest")
        }
        guard let ecKey = child(element, "OriginatorKeyInfo").flatMap({ child($0, "KeyValue") }).flatMap({ child($0, "ECKeyValue") }),
              let curveURI = child(ecKey, "NamedCurve")?.attribute("URI", namespace: nil),
              let publicKey = child(ecKey, "PublicKey") else {
            throw CDOCError(.malformed, "a recipient has no sender key (OriginatorKeyInfo)")
        }
        guard let curve = CDOC1Names.curveURIs[curveURI] else {
            throw CDOCError(.unsupported, "a recipient's curve \(curveURI) is not P-256, P-384 or P-521")
        }
        guard let certificateElement = child(element, "RecipientKeyInfo").flatMap({ child($0, "X509Data") })
            .flatMap({ child($0, "X509Certificate") }) else {
            throw CDOCError(.malformed, "an EC recipient has no certificate (RecipientKeyInfo)")
        }
        let agreement = Agreement(curve: curve, senderPoint: try base64(publicKey, "the sender key"), digest: digest,
                                  algorithmID: try bitString(parameters, "AlgorithmID"),
                                  partyUInfo: try bitString(parameters, "PartyUInfo"),
                                  partyVInfo: try bitString(parameters, "PartyVInfo"))
        return (agreement, try certificate(certificateElement))
    }

    /// A ConcatKDF attribute: hex with the XML-ENC 1.1 "unused bits" byte `00` first (dropped).
    private static func bitString(_ element: XMLElement, _ name: String) throws -> [UInt8] {
        guard let hex = element.attribute(name, namespace: nil), let bytes = CDOC1Hex.decode(hex), bytes.first == 0 else {
            throw CDOCError(.malformed, "a recipient's ConcatKDF \(name) is not hex starting with 00")
        }
        return Array(bytes.dropFirst())
    }

    private static func certificate(_ element: XMLElement) throws -> Certificate {
        do { return try Certificate(der: try base64(element, "a recipient certificate")) } catch is CryptoError {
            throw CDOCError(.malformed, "a recipient certificate is not DER X.509")
        }
    }

    /// XML's base64Binary: the line breaks and spaces between groups are XML white space (four
    /// ASCII bytes), dropped by byte: a Character filter took 60% of a large file's decryption.
    static func base64(_ element: XMLElement, _ what: String) throws -> [UInt8] {
        let text = element.text.utf8.filter { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
        guard let data = Data(base64Encoded: Data(text)) else { throw CDOCError(.malformed, "\(what) is not base64") }
        return [UInt8](data)
    }

    static func child(_ element: XMLElement, _ localName: String) -> XMLElement? {
        element.children.first { $0.localName == localName }
    }

    static func children(_ element: XMLElement, _ localName: String) -> [XMLElement] {
        element.children.filter { $0.localName == localName }
    }
}

/// Hex text to bytes and back.
enum CDOC1Hex {
    static func decode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return String(decoding: text, as: UTF8.self)
    }

    private static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case 0x30...0x39: digit - 0x30
        case 0x41...0x46: digit - 0x37
        case 0x61...0x66: digit - 0x57
        default: nil
        }
    }
}

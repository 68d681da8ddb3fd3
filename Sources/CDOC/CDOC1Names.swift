import Crypto

/// The URIs and property names of CDOC 1.x (XML-ENC) documents.
enum CDOC1Names {
    static let xmlenc = "http://www.w3.org/2001/04/xmlenc#"
    static let xmldsig = "http://www.w3.org/2000/09/xmldsig#"
    static let xmlenc11 = "http://www.w3.org/2009/xmlenc11#"
    static let xmldsig11 = "http://www.w3.org/2009/xmldsig11#"

    static let aes128CBC = xmlenc + "aes128-cbc", aes192CBC = xmlenc + "aes192-cbc", aes256CBC = xmlenc + "aes256-cbc"
    static let aes128GCM = xmlenc11 + "aes128-gcm", aes192GCM = xmlenc11 + "aes192-gcm", aes256GCM = xmlenc11 + "aes256-gcm"
    static let rsa15 = xmlenc + "rsa-1_5"
    static let keyWrap = [xmlenc + "kw-aes128": 16, xmlenc + "kw-aes192": 24, xmlenc + "kw-aes256": 32]
    static let ecdhES = xmlenc11 + "ECDH-ES"
    static let concatKDF = xmlenc11 + "ConcatKDF"

    static let digests: [String: DigestAlgorithm] = [
        xmlenc + "sha256": .sha256, xmlenc + "sha384": .sha384, xmlenc + "sha512": .sha512,
        "http://www.w3.org/2001/04/xmldsig-more#sha384": .sha384,
    ]
    static func digestURI(_ digest: DigestAlgorithm) -> String {
        switch digest {
        case .sha256: xmlenc + "sha256"
        case .sha384: xmlenc + "sha384"
        default: xmlenc + "sha512"
        }
    }

    /// The payload is a DDOC 1.3 document holding the files.
    static let ddocMimeTypes: Set<String> = ["http://www.sk.ee/DigiDoc/v1.3.0/digidoc.xsd", "http://www.sk.ee/DigiDoc/1.3.0/digidoc.xsd"]
    /// libdigidoc: the decrypted payload is a zlib stream.
    static let zlibMimeType = "http://www.isi.edu/in-noes/iana/assignments/media-types/application/zip"
    static let ddocNamespace = "http://www.sk.ee/DigiDoc/v1.3.0#"

    static let curveURIs: [String: EllipticCurve] = [
        "urn:oid:1.2.840.10045.3.1.7": .p256, "urn:oid:1.3.132.0.34": .p384, "urn:oid:1.3.132.0.35": .p521,
    ]

    /// The key length (bytes) and whether it is GCM, for a payload method URI.
    static func payloadCipher(_ uri: String) -> (keyLength: Int, gcm: Bool)? {
        switch uri {
        case aes128CBC: (16, false)
        case aes192CBC: (24, false)
        case aes256CBC: (32, false)
        case aes128GCM: (16, true)
        case aes192GCM: (24, true)
        case aes256GCM: (32, true)
        default: nil
        }
    }
}

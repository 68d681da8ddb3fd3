import Crypto

/// The XML-DSig URIs for digests and signature methods (asice-xades.md §2.4).
public enum AlgorithmURI {
    public static func digest(_ uri: String) -> DigestAlgorithm? {
        switch uri {
        case "http://www.w3.org/2000/09/xmldsig#sha1": .sha1
        case "http://www.w3.org/2001/04/xmldsig-more#sha224": .sha224
        case "http://www.w3.org/2001/04/xmlenc#sha256": .sha256
        case "http://www.w3.org/2001/04/xmldsig-more#sha384": .sha384
        case "http://www.w3.org/2001/04/xmlenc#sha512": .sha512
        case "http://www.w3.org/2007/05/xmldsig-more#sha3-224": .sha3_224
        case "http://www.w3.org/2007/05/xmldsig-more#sha3-256": .sha3_256
        case "http://www.w3.org/2007/05/xmldsig-more#sha3-384": .sha3_384
        case "http://www.w3.org/2007/05/xmldsig-more#sha3-512": .sha3_512
        default: nil
        }
    }

    public static func uri(_ digest: DigestAlgorithm) -> String {
        switch digest {
        case .sha1: "http://www.w3.org/2000/09/xmldsig#sha1"
        case .sha224: "http://www.w3.org/2001/04/xmldsig-more#sha224"
        case .sha256: "http://www.w3.org/2001/04/xmlenc#sha256"
        case .sha384: "http://www.w3.org/2001/04/xmldsig-more#sha384"
        case .sha512: "http://www.w3.org/2001/04/xmlenc#sha512"
        case .sha3_224: "http://www.w3.org/2007/05/xmldsig-more#sha3-224"
        case .sha3_256: "http://www.w3.org/2007/05/xmldsig-more#sha3-256"
        case .sha3_384: "http://www.w3.org/2007/05/xmldsig-more#sha3-384"
        case .sha3_512: "http://www.w3.org/2007/05/xmldsig-more#sha3-512"
        }
    }

    private static let suffixes: [(DigestAlgorithm, String)] = [
        (.sha1, "sha1"), (.sha224, "sha224"), (.sha256, "sha256"), (.sha384, "sha384"), (.sha512, "sha512"),
        (.sha3_224, "sha3-224"), (.sha3_256, "sha3-256"), (.sha3_384, "sha3-384"), (.sha3_512, "sha3-512"),
    ]

    public static func signature(_ uri: String) -> SignatureAlgorithm? {
        if uri == "http://www.w3.org/2000/09/xmldsig#rsa-sha1" { return SignatureAlgorithm(.rsaPKCS1, .sha1) }
        if uri == "http://www.w3.org/2000/09/xmldsig#dsa-sha1" { return nil }
        let more = "http://www.w3.org/2001/04/xmldsig-more#"
        let more2007 = "http://www.w3.org/2007/05/xmldsig-more#"
        for (digest, name) in suffixes {
            if uri == more + "rsa-" + name { return SignatureAlgorithm(.rsaPKCS1, digest) }
            if uri == more + "ecdsa-" + name { return SignatureAlgorithm(.ecdsa, digest) }
            if uri == more2007 + name + "-rsa-MGF1" { return SignatureAlgorithm(.rsaPSS, digest) }
        }
        return nil
    }

    public static func uri(_ algorithm: SignatureAlgorithm) -> String {
        let name = suffixes.first { $0.0 == algorithm.digest }!.1
        switch algorithm.scheme {
        case .rsaPKCS1:
            return algorithm.digest == .sha1 ? "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
                : "http://www.w3.org/2001/04/xmldsig-more#rsa-" + name
        case .ecdsa: return "http://www.w3.org/2001/04/xmldsig-more#ecdsa-" + name
        case .rsaPSS: return "http://www.w3.org/2007/05/xmldsig-more#" + name + "-rsa-MGF1"
        }
    }
}

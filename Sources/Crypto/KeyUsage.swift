import COpenSSL

extension Certificate {
    /// The keyUsage bits by their RFC 5280 names (`nonRepudiation` is what signing needs);
    /// empty when the certificate has no keyUsage extension.
    public var keyUsageNames: [String] {
        let usage = X509_get_key_usage(x509)
        guard usage != UInt32.max else { return [] }
        let names: [(Int32, String)] = [
            (X509v3_KU_DIGITAL_SIGNATURE, "digitalSignature"), (X509v3_KU_NON_REPUDIATION, "nonRepudiation"),
            (X509v3_KU_KEY_ENCIPHERMENT, "keyEncipherment"), (X509v3_KU_DATA_ENCIPHERMENT, "dataEncipherment"),
            (X509v3_KU_KEY_AGREEMENT, "keyAgreement"), (X509v3_KU_KEY_CERT_SIGN, "keyCertSign"),
            (X509v3_KU_CRL_SIGN, "cRLSign"), (X509v3_KU_ENCIPHER_ONLY, "encipherOnly"), (X509v3_KU_DECIPHER_ONLY, "decipherOnly"),
        ]
        return names.filter { usage & UInt32($0.0) != 0 }.map(\.1)
    }
}

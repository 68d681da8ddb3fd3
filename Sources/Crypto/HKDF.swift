import COpenSSL

/// HKDF with SHA-256 (RFC 5869) through OpenSSL's EVP_KDF "HKDF", as its two halves: CDOC2
/// stores the extracted key (FMK) and expands it with several labels.
public enum HKDF {
    /// HKDF-Extract(salt, IKM): the 32-byte pseudorandom key.
    public static func extract(salt: [UInt8], ikm: SecretBytes) throws -> SecretBytes {
        let parameters = OpenSSLParameters()
        parameters.int(OSSL_KDF_PARAM_MODE, Int32(EVP_KDF_HKDF_MODE_EXTRACT_ONLY))
        parameters.utf8(OSSL_KDF_PARAM_DIGEST, "SHA256")
        ikm.withBytes { parameters.octets(OSSL_KDF_PARAM_KEY, $0) }
        parameters.octets(OSSL_KDF_PARAM_SALT, salt)
        return try OpenSSLKDF.derive("HKDF", length: 32, parameters)
    }

    /// HKDF-Expand(PRK, info, length).
    public static func expand(prk: SecretBytes, info: [UInt8], length: Int) throws -> SecretBytes {
        let parameters = OpenSSLParameters()
        parameters.int(OSSL_KDF_PARAM_MODE, Int32(EVP_KDF_HKDF_MODE_EXPAND_ONLY))
        parameters.utf8(OSSL_KDF_PARAM_DIGEST, "SHA256")
        prk.withBytes { parameters.octets(OSSL_KDF_PARAM_KEY, $0) }
        parameters.octets(OSSL_KDF_PARAM_INFO, info)
        return try OpenSSLKDF.derive("HKDF", length: length, parameters)
    }
}

import COpenSSL

/// PBKDF2-HMAC-SHA256 (RFC 8018) through OpenSSL's EVP_KDF "PBKDF2": CDOC2 password recipients.
public enum PBKDF2 {
    public static func sha256(password: SecretBytes, salt: [UInt8], iterations: Int, length: Int) throws -> SecretBytes {
        guard iterations > 0, iterations <= Int(UInt32.max) else { throw CryptoError("PBKDF2 needs a positive iteration count") }
        let parameters = OpenSSLParameters()
        parameters.utf8(OSSL_KDF_PARAM_DIGEST, "SHA256")
        password.withBytes { parameters.octets(OSSL_KDF_PARAM_PASSWORD, $0) }
        parameters.octets(OSSL_KDF_PARAM_SALT, salt)
        parameters.uint(OSSL_KDF_PARAM_ITER, UInt32(iterations))
        // No SP 800-132 lower bounds: the iteration count and salt are the file's, checked by the caller.
        parameters.int(OSSL_KDF_PARAM_PKCS5, 1)
        return try OpenSSLKDF.derive("PBKDF2", length: length, parameters)
    }
}

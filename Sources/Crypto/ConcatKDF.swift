/// NIST SP 800-56A single-step KDF with a hash ("ConcatKDF"; OpenSSL's EVP_KDF "SSKDF"):
/// H(counter ‖ Z ‖ OtherInfo) for counter 1, 2, …, truncated to `length`.
public enum ConcatKDF {
    public static func derive(secret: SecretBytes, otherInfo: [UInt8], digest: DigestAlgorithm, length: Int) throws -> SecretBytes {
        let parameters = OpenSSLParameters()
        parameters.utf8("digest", digest.rawValue)
        secret.withBytes { parameters.octets("key", $0) }
        parameters.octets("info", otherInfo)
        return try OpenSSLKDF.derive("SSKDF", length: length, parameters)
    }
}

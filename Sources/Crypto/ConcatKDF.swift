import COpenSSL

/// NIST SP 800-56A single-step KDF with a hash ("ConcatKDF"; OpenSSL's EVP_KDF "SSKDF"):
/// H(counter ‖ Z ‖ OtherInfo) for counter 1, 2, …, truncated to `length`.
public enum ConcatKDF {
    public static func derive(secret: SecretBytes, otherInfo: [UInt8], digest: DigestAlgorithm, length: Int) throws -> SecretBytes {
        guard let kdf = EVP_KDF_fetch(nil, "SSKDF", nil) else { throw CryptoError("OpenSSL has no SSKDF: \(OpenSSLError.last())") }
        defer { EVP_KDF_free(kdf) }
        guard let context = EVP_KDF_CTX_new(kdf) else { throw CryptoError("out of memory") }
        defer { EVP_KDF_CTX_free(context) }
        var digestName = Array(digest.rawValue.utf8CString)
        var info = otherInfo
        var out = [UInt8](repeating: 0, count: length)
        let ok = secret.withBytes { z -> Bool in
            digestName.withUnsafeMutableBufferPointer { digestText in
                info.withUnsafeMutableBytes { infoBytes in
                    var params = [
                        OSSL_PARAM_construct_utf8_string(name("digest"), digestText.baseAddress, 0),
                        OSSL_PARAM_construct_octet_string(name("key"), UnsafeMutableRawPointer(mutating: z.baseAddress), z.count),
                        OSSL_PARAM_construct_octet_string(name("info"), infoBytes.baseAddress, infoBytes.count),
                        OSSL_PARAM_construct_end(),
                    ]
                    return EVP_KDF_derive(context, &out, length, &params) == 1
                }
            }
        }
        guard ok else {
            SecretBytes.zero(&out)
            throw CryptoError("ConcatKDF failed: \(OpenSSLError.last())")
        }
        defer { SecretBytes.zero(&out) }
        return SecretBytes(out)
    }

    /// OSSL_PARAM keeps the key pointer: it must outlive the call (a static string).
    private static func name(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}

import COpenSSL

/// AES-CMAC (NIST SP 800-38B, RFC 4493) through OpenSSL's EVP_MAC: the MAC of PACE's
/// authentication tokens and of AES secure messaging.
public enum CMAC {
    /// The full 16-byte CMAC of `data` under an AES key of 16, 24 or 32 bytes.
    public static func aes(key: SecretBytes, _ data: [UInt8]) throws -> [UInt8] {
        let cipherName = switch key.count {
        case 16: "AES-128-CBC"
        case 24: "AES-192-CBC"
        case 32: "AES-256-CBC"
        default: throw CryptoError("an AES key is 16, 24 or 32 bytes, not \(key.count)")
        }
        guard let mac = EVP_MAC_fetch(nil, "CMAC", nil) else { throw CryptoError("OpenSSL has no CMAC: \(OpenSSLError.last())") }
        defer { EVP_MAC_free(mac) }
        guard let context = EVP_MAC_CTX_new(mac) else { throw CryptoError("out of memory") }
        defer { EVP_MAC_CTX_free(context) }

        var name = Array(cipherName.utf8CString)
        let initialized = OSSL_MAC_PARAM_CIPHER.withCString { parameterName in
            name.withUnsafeMutableBufferPointer { nameBuffer in
                let parameters = [
                    OSSL_PARAM_construct_utf8_string(parameterName, nameBuffer.baseAddress, 0),
                    OSSL_PARAM_construct_end(),
                ]
                return key.withBytes { keyBytes in
                    EVP_MAC_init(context, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), keyBytes.count, parameters)
                }
            }
        }
        guard initialized == 1 else { throw CryptoError("CMAC setup failed: \(OpenSSLError.last())") }
        guard EVP_MAC_update(context, data, data.count) == 1 else { throw CryptoError("CMAC failed: \(OpenSSLError.last())") }
        var out = [UInt8](repeating: 0, count: AES.blockSize)
        var length = 0
        guard EVP_MAC_final(context, &out, &length, out.count) == 1, length == AES.blockSize else {
            throw CryptoError("CMAC failed: \(OpenSSLError.last())")
        }
        return out
    }

    /// Compares two MACs without stopping at the first difference, so timing tells nothing.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

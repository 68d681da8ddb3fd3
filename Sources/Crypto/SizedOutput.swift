/// OpenSSL's two-step output calls (EVP_PKEY_sign, _encrypt, _decrypt, _derive): called with no
/// buffer they give the largest length, then they fill a buffer of it and say how much they used.
enum SizedOutput {
    typealias Call = (UnsafeMutablePointer<UInt8>?, inout Int) -> Int32

    /// The output; `failure` (with OpenSSL's reason) when either step fails, or `fillFailure`
    /// instead when only the second does (for RSA decryption that is "not this key").
    static func bytes(_ failure: String, fillFailure: String? = nil, _ call: Call) throws -> [UInt8] {
        try filled(failure, fillFailure: fillFailure, call)
    }

    /// The same for a secret: the working buffer is wiped, the result held in `SecretBytes`.
    static func secret(_ failure: String, fillFailure: String? = nil, _ call: Call) throws -> SecretBytes {
        SecretBytes(try filled(failure, fillFailure: fillFailure, call))
    }

    /// Trimmed to the length used; a buffer that fails to fill is wiped before throwing.
    private static func filled(_ failure: String, fillFailure: String?, _ call: Call) throws -> [UInt8] {
        var length = 0
        guard call(nil, &length) == 1 else { throw CryptoError("\(failure): \(OpenSSLError.last())") }
        var out = [UInt8](repeating: 0, count: length)
        guard out.withUnsafeMutableBufferPointer({ call($0.baseAddress, &length) }) == 1 else {
            SecretBytes.zero(&out)
            throw CryptoError(fillFailure ?? "\(failure): \(OpenSSLError.last())")
        }
        let used = Array(out[..<length])
        SecretBytes.zero(&out)
        return used
    }
}

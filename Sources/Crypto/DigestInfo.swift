import COpenSSL

/// DigestInfo ::= SEQUENCE { AlgorithmIdentifier, OCTET STRING } (PKCS#1), as a BDOC time-mark
/// OCSP nonce holds it. Parsed as ASN.1 by OpenSSL, so both spellings of the algorithm
/// identifier pass: with the NULL parameter and without it.
public enum DigestInfo {
    public static func parse(_ bytes: [UInt8]) -> (algorithm: DigestAlgorithm, digest: [UInt8])? {
        var der = bytes
        // Some producers wrap the DigestInfo in one more OCTET STRING (libdigidocpp strips it too).
        if der.count > 2, der[0] == 0x04, Int(der[1]) == der.count - 2 { der = Array(der.dropFirst(2)) }
        return der.withUnsafeBufferPointer { buffer -> (DigestAlgorithm, [UInt8])? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let info = d2i_X509_SIG(nil, &cursor, buffer.count) else { return nil }
            defer { X509_SIG_free(info) }
            // The whole input must be the DigestInfo: nothing may follow it.
            guard let end = cursor, end == buffer.baseAddress! + buffer.count else { return nil }
            var algorithm: UnsafePointer<X509_ALGOR>?
            var digest: UnsafePointer<ASN1_OCTET_STRING>?
            X509_SIG_get0(info, &algorithm, &digest)
            var object: OpaquePointer?
            var parameterType: Int32 = 0
            var parameter: UnsafeRawPointer?
            X509_ALGOR_get0(&object, &parameterType, &parameter, algorithm)
            // Parameters, when present, must be NULL.
            guard parameterType == V_ASN1_UNDEF || parameterType == V_ASN1_NULL || parameterType == -1,
                  let object, let digest, let data = ASN1_STRING_get0_data(digest) else { return nil }
            guard let match = DigestAlgorithm(nid: OBJ_obj2nid(object)) else { return nil }
            let value = Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(digest))))
            guard value.count == match.length else { return nil }
            return (match, value)
        }
    }
}

import COpenSSL

/// An RFC 3161 TimeStampReq as libdigidocpp sends it: version 1, the imprint with NULL algorithm
/// parameters, a 20-byte random nonce whose first byte is not zero, certReq TRUE, no policy.
public struct TimeStampRequest: Sendable {
    public let imprint: [UInt8]
    public let algorithm: DigestAlgorithm
    /// The nonce as the magnitude of the INTEGER (20 bytes).
    public let nonce: [UInt8]
    public let der: [UInt8]

    /// The imprint hashes TSAs are asked to stamp.
    public static let algorithms: [DigestAlgorithm] = [.sha256, .sha384, .sha512]

    public static func make(imprint digest: [UInt8], algorithm: DigestAlgorithm = .sha256) throws -> TimeStampRequest {
        guard algorithms.contains(algorithm) else {
            throw CryptoError("time-stamps are requested with SHA-256, SHA-384 or SHA-512, not \(algorithm.rawValue)")
        }
        guard digest.count == algorithm.length else {
            throw CryptoError("a \(algorithm.rawValue) imprint has \(algorithm.length) bytes, not \(digest.count)")
        }
        var nonce = try SecureRandom.bytes(20)
        // A zero first byte would make the INTEGER shorter than 20 bytes.
        while nonce[0] == 0 { nonce[0] = try SecureRandom.bytes(1)[0] }

        guard let request = TS_REQ_new(), let imprint = TS_MSG_IMPRINT_new(), let hash = X509_ALGOR_new() else {
            throw CryptoError("out of memory")
        }
        defer { TS_REQ_free(request); TS_MSG_IMPRINT_free(imprint); X509_ALGOR_free(hash) }
        var bytes = digest
        guard TS_REQ_set_version(request, 1) == 1,
              X509_ALGOR_set0(hash, OBJ_nid2obj(algorithm.nid), V_ASN1_NULL, nil) == 1,
              TS_MSG_IMPRINT_set_algo(imprint, hash) == 1,  // the setters copy their argument
              TS_MSG_IMPRINT_set_msg(imprint, &bytes, Int32(bytes.count)) == 1,
              TS_REQ_set_msg_imprint(request, imprint) == 1,
              try setNonce(nonce, on: request),
              TS_REQ_set_cert_req(request, 1) == 1,
              let der = TimeStampAndOCSP.der({ i2d_TS_REQ(request, $0) })
        else { throw CryptoError("cannot build the time-stamp request: \(OpenSSLError.last())") }
        return TimeStampRequest(imprint: digest, algorithm: algorithm, nonce: nonce, der: der)
    }

    private static func setNonce(_ nonce: [UInt8], on request: OpaquePointer) throws -> Bool {
        guard let bignum = BN_bin2bn(nonce, Int32(nonce.count), nil) else { throw CryptoError("out of memory") }
        defer { BN_free(bignum) }
        guard let integer = BN_to_ASN1_INTEGER(bignum, nil) else { throw CryptoError("out of memory") }
        defer { ASN1_INTEGER_free(integer) }
        return TS_REQ_set_nonce(request, integer) == 1
    }
}

import COpenSSL

/// How the OCSP and time-stamp clients reach the network: POST `body` to `url` with this
/// Content-Type and Accept, and get back the status, content type and body whatever the status.
/// Crypto does not depend on the HTTP module; `HTTP.HTTPClient.post` has exactly this shape,
/// so callers pass it: `TimeStampClient(url: url, post: client.post)`.
public typealias HTTPPost = @Sendable (_ url: String, _ body: [UInt8], _ contentType: String, _ accept: String,
                                       _ timeout: Double) throws -> (status: Int, contentType: String?, body: [UInt8])

/// Small OpenSSL chores shared by the time-stamp and OCSP code.
enum TimeStampAndOCSP {
    /// DER through an OpenSSL i2d function (called twice: once for the length, once to write).
    static func der(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> [UInt8]? {
        let length = encode(nil)
        guard length > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return encode(&cursor)
        }
        return written == length ? out : nil
    }

    /// The bytes of an ASN1_STRING (OCTET STRING, BIT STRING, UTF8String …).
    static func bytes(_ string: UnsafePointer<ASN1_STRING>?) -> [UInt8] {
        guard let string, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))))
    }

    /// The magnitude of a non-negative INTEGER, big-endian, without leading zeros.
    static func integerBytes(_ integer: UnsafePointer<ASN1_INTEGER>?) -> [UInt8]? {
        guard let integer, let bignum = ASN1_INTEGER_to_BN(integer, nil) else { return nil }
        defer { BN_free(bignum) }
        var out = [UInt8](repeating: 0, count: (Int(BN_num_bits(bignum)) + 7) / 8)
        BN_bn2bin(bignum, &out)
        return out
    }

    static func dottedOID(_ object: OpaquePointer?) -> String? {
        guard let object else { return nil }
        var buffer = [UInt8](repeating: 0, count: 128)
        let length = buffer.withUnsafeMutableBufferPointer { text in
            text.withMemoryRebound(to: CChar.self) { OBJ_obj2txt($0.baseAddress, Int32($0.count), object, 1) }
        }
        guard length > 0, Int(length) < buffer.count else { return nil }
        return String(decoding: buffer.prefix(Int(length)), as: UTF8.self)
    }

    /// Certificates of an OpenSSL stack, copied into `Certificate`s (the stack stays the caller's).
    static func certificates(_ stack: OpaquePointer?) -> [Certificate] {
        guard let stack else { return [] }
        return (0..<copenssl_sk_x509_num(stack)).compactMap {
            copenssl_sk_x509_value(stack, $0).flatMap { try? Certificate(x509Copy: $0) }
        }
    }
}

import COpenSSL
import Foundation

/// An RFC 3161 time-stamp token (a CMS SignedData holding TSTInfo). For now: when it says.
public final class TimeStampToken: @unchecked Sendable {
    public let genTime: Date

    public init(der: [UInt8]) throws {
        var pointer: UnsafePointer<UInt8>? = nil
        let pkcs7 = der.withUnsafeBufferPointer { buffer -> UnsafeMutablePointer<PKCS7>? in
            pointer = buffer.baseAddress
            return d2i_PKCS7(nil, &pointer, buffer.count)
        }
        guard let pkcs7 else { throw CryptoError("not a DER time-stamp token") }
        defer { PKCS7_free(pkcs7) }
        guard let info = PKCS7_to_TS_TST_INFO(pkcs7) else { throw CryptoError("the time-stamp token holds no TSTInfo") }
        defer { TS_TST_INFO_free(info) }
        guard let time = TS_TST_INFO_get_time(info), let date = Certificate.date(time) else {
            throw CryptoError("the time-stamp token has no time")
        }
        genTime = date
    }
}

import COpenSSL
import Foundation

/// Why a certificate or token could not be read.
public struct CryptoError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// An X.509 certificate (OpenSSL's X509, owned and freed here).
public final class Certificate: @unchecked Sendable {
    let x509: OpaquePointer
    /// The DER encoding it was read from.
    public let der: [UInt8]

    public init(der: [UInt8]) throws {
        var pointer: UnsafePointer<UInt8>? = nil
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            pointer = buffer.baseAddress
            return d2i_X509(nil, &pointer, buffer.count)
        }
        guard let parsed else { throw CryptoError("not a DER X.509 certificate") }
        x509 = parsed
        self.der = der
    }

    deinit { X509_free(x509) }

    /// One attribute of the subject (e.g. NID_commonName), or nil.
    public func subject(_ nid: Int32) -> String? { Self.entry(X509_get_subject_name(x509), nid) }
    public func issuer(_ nid: Int32) -> String? { Self.entry(X509_get_issuer_name(x509), nid) }

    public var commonName: String? { subject(NID_commonName) }
    public var serialNumberAttribute: String? { subject(NID_serialNumber) }
    public var country: String? { subject(NID_countryName) }
    public var givenName: String? { subject(NID_givenName) }
    public var surname: String? { subject(NID_surname) }
    public var issuerCommonName: String? { issuer(NID_commonName) }

    /// The subject as one line (RFC 2253 order, UTF-8).
    public var subjectLine: String { Self.line(X509_get_subject_name(x509)) }
    public var issuerLine: String { Self.line(X509_get_issuer_name(x509)) }

    public var notBefore: Date? { Self.date(X509_get0_notBefore(x509)) }
    public var notAfter: Date? { Self.date(X509_get0_notAfter(x509)) }

    public var pem: String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        PEM_write_bio_X509(bio, x509)
        var data: UnsafeMutablePointer<CChar>? = nil
        let length = copenssl_bio_mem_data(bio, &data)
        guard let data, length > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    private static func entry(_ name: OpaquePointer?, _ nid: Int32) -> String? {
        guard let name else { return nil }
        let index = X509_NAME_get_index_by_NID(name, nid, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),
              let data = X509_NAME_ENTRY_get_data(entry) else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>? = nil
        let length = ASN1_STRING_to_UTF8(&utf8, data)
        guard length >= 0, let utf8 else { return nil }
        defer { copenssl_free(utf8) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }

    private static func line(_ name: OpaquePointer?) -> String {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        X509_NAME_print_ex(bio, name, 0, copenssl_name_flags_rfc2253_utf8())
        var data: UnsafeMutablePointer<CChar>? = nil
        let length = copenssl_bio_mem_data(bio, &data)
        guard let data, length > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}

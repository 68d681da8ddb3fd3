import Foundation
import COpenSSL

/// What signing and validation ask of a certificate beyond its names: key, usages, qualification
/// statements, where its OCSP responder is, and how it relates to other certificates.
extension Certificate {
    public var publicKey: PublicKey? {
        guard let key = X509_get_pubkey(x509) else { return nil }
        return PublicKey(owning: key)
    }

    /// The serial number in decimal, as XAdES IssuerSerial writes it.
    public var serialDecimal: String {
        guard let serial = X509_get_serialNumber(x509), let bn = ASN1_INTEGER_to_BN(serial, nil) else { return "" }
        defer { BN_free(bn) }
        guard let text = BN_bn2dec(bn) else { return "" }
        defer { copenssl_free(text) }
        return String(cString: text)
    }

    /// The issuer name as XAdES X509IssuerName writes it (RFC 2253, non-ASCII escaped as libdigidocpp does).
    public var issuerNameRFC2253: String {
        Self.print(X509_get_issuer_name(x509), flags: copenssl_name_flags_rfc2253())
    }

    /// Subject and issuer as (short name, UTF-8 value) pairs in certificate order.
    public var subjectAttributes: [(String, String)] { Self.attributes(X509_get_subject_name(x509)) }
    public var issuerAttributes: [(String, String)] { Self.attributes(X509_get_issuer_name(x509)) }

    public var sha256Fingerprint: [UInt8] { Digest.hash(der, .sha256) }

    /// keyUsage nonRepudiation (contentCommitment): required of a signing certificate.
    public var hasNonRepudiation: Bool {
        let usage = X509_get_key_usage(x509)
        return usage != UInt32.max && usage & UInt32(X509v3_KU_NON_REPUDIATION) != 0
    }

    public var isCA: Bool { X509_check_ca(x509) > 0 }

    /// Extended key usages, as dotted OIDs.
    public var extendedKeyUsages: [String] {
        guard let raw = X509_get_ext_d2i(x509, NID_ext_key_usage, nil, nil) else { return [] }
        let stack = OpaquePointer(raw)
        defer { copenssl_sk_asn1_object_pop_free(stack) }
        return (0..<copenssl_sk_asn1_object_num(stack)).compactMap { Self.oid(copenssl_sk_asn1_object_value(stack, $0)) }
    }

    /// certificatePolicies, as dotted OIDs (QSCD policies 0.4.0.1456.1.1, 0.4.0.194112.1.2 …).
    public var policies: [String] {
        guard let raw = X509_get_ext_d2i(x509, NID_certificate_policies, nil, nil) else { return [] }
        let stack = OpaquePointer(raw)
        defer { copenssl_policies_free(stack) }
        return (0..<copenssl_sk_policyinfo_num(stack)).compactMap { Self.oid(copenssl_policyinfo_oid(stack, $0)) }
    }

    /// The statement OIDs of the qcStatements extension (ETSI EN 319 412-5), e.g. 0.4.0.1862.1.1
    /// QcCompliance and 0.4.0.1862.1.4 QcSSCD; QcType values are reported as 0.4.0.1862.1.6.x.
    public var qcStatements: [String] {
        guard let value = extensionValue(oid: "1.3.6.1.5.5.7.1.3") else { return [] }
        return DERReader.qcStatementOIDs(value)
    }

    /// The raw DER value (inside the OCTET STRING) of an extension, by dotted OID.
    public func extensionValue(oid: String) -> [UInt8]? {
        guard let object = OBJ_txt2obj(oid, 1) else { return nil }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(x509, object, -1)
        guard index >= 0, let ext = X509_get_ext(x509, index), let data = X509_EXTENSION_get_data(ext) else { return nil }
        let length = Int(ASN1_STRING_length(data))
        guard let bytes = ASN1_STRING_get0_data(data) else { return nil }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }

    /// The OCSP responder URLs from Authority Information Access.
    public var ocspURLs: [String] {
        guard let list = X509_get1_ocsp(x509) else { return [] }
        defer { X509_email_free(list) }
        return (0..<copenssl_sk_string_num(list)).compactMap { copenssl_sk_string_value(list, $0).map { String(cString: $0) } }
    }

    /// True when `issuer`'s name matches this certificate's issuer and its key verifies this certificate.
    public func isIssued(by issuer: Certificate) -> Bool {
        guard X509_check_issued(issuer.x509, x509) == X509_V_OK else { return false }
        guard let key = X509_get0_pubkey(issuer.x509) else { return false }
        return X509_verify(x509, key) == 1
    }

    public func isValid(at date: Date) -> Bool {
        guard let notBefore, let notAfter else { return false }
        return notBefore <= date && date <= notAfter
    }

    public static func == (a: Certificate, b: Certificate) -> Bool { a.der == b.der }

    /// Every certificate in a PEM text (other blocks are skipped).
    public static func all(pem: [UInt8]) -> [Certificate] {
        var found: [Certificate] = []
        pem.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return }
            defer { BIO_free(bio) }
            while let x509 = PEM_read_bio_X509(bio, nil, nil, nil) {
                defer { X509_free(x509) }
                var out: UnsafeMutablePointer<UInt8>? = nil
                let length = i2d_X509(x509, &out)
                if length > 0, let out {
                    if let certificate = try? Certificate(der: Array(UnsafeBufferPointer(start: out, count: Int(length)))) {
                        found.append(certificate)
                    }
                    copenssl_free(out)
                }
            }
            ERR_clear_error()
        }
        return found
    }

    /// One certificate from DER or PEM bytes.
    public static func parse(_ bytes: [UInt8]) throws -> Certificate {
        if let certificate = try? Certificate(der: bytes) { return certificate }
        guard let first = all(pem: bytes).first else { throw CryptoError("not a certificate (neither DER nor PEM)") }
        return first
    }

    static func oid(_ object: OpaquePointer?) -> String? {
        guard let object else { return nil }
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        return length > 0 ? String(cString: buffer) : nil
    }

    static func print(_ name: OpaquePointer?, flags: UInt) -> String {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        X509_NAME_print_ex(bio, name, 0, flags)
        var data: UnsafeMutablePointer<CChar>? = nil
        let length = copenssl_bio_mem_data(bio, &data)
        guard let data, length > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    static func attributes(_ name: OpaquePointer?) -> [(String, String)] {
        guard let name else { return [] }
        return (0..<X509_NAME_entry_count(name)).compactMap { index in
            guard let entry = X509_NAME_get_entry(name, index),
                  let object = X509_NAME_ENTRY_get_object(entry),
                  let data = X509_NAME_ENTRY_get_data(entry) else { return nil }
            let nid = OBJ_obj2nid(object)
            let key = nid != NID_undef ? String(cString: OBJ_nid2sn(nid)) : (oid(object) ?? "?")
            var utf8: UnsafeMutablePointer<UInt8>? = nil
            let length = ASN1_STRING_to_UTF8(&utf8, data)
            guard length >= 0, let utf8 else { return nil }
            defer { copenssl_free(utf8) }
            return (key, String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self))
        }
    }
}

/// Just enough DER walking for the qcStatements extension, which OpenSSL does not decode.
enum DERReader {
    /// (tag, content range) of each element in `bytes[range]`.
    static func elements(_ bytes: [UInt8], _ range: Range<Int>) -> [(UInt8, Range<Int>)] {
        var out: [(UInt8, Range<Int>)] = []
        var i = range.lowerBound
        while i + 2 <= range.upperBound {
            let tag = bytes[i]
            var length = Int(bytes[i + 1])
            var start = i + 2
            if length & 0x80 != 0 {
                let count = length & 0x7F
                guard count > 0, count <= 4, start + count <= range.upperBound else { return out }
                length = bytes[start..<start + count].reduce(0) { $0 << 8 | Int($1) }
                start += count
            }
            guard start + length <= range.upperBound else { return out }
            out.append((tag, start..<start + length))
            i = start + length
        }
        return out
    }

    static func oid(_ bytes: [UInt8], _ range: Range<Int>) -> String? {
        var der: [UInt8] = [0x06]
        let length = range.count
        if length < 0x80 { der.append(UInt8(length)) } else { der += [0x81, UInt8(length & 0xFF)] }
        der += bytes[range]
        var pointer: UnsafePointer<UInt8>? = nil
        let object = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            pointer = buffer.baseAddress
            return d2i_ASN1_OBJECT(nil, &pointer, buffer.count)
        }
        guard let object else { return nil }
        defer { ASN1_OBJECT_free(object) }
        return Certificate.oid(object)
    }

    /// QCStatements ::= SEQUENCE OF SEQUENCE { statementId OID, statementInfo ANY OPTIONAL }.
    /// QcType (0.4.0.1862.1.6) lists its type OIDs as a SEQUENCE OF OID: reported as extra entries.
    static func qcStatementOIDs(_ bytes: [UInt8]) -> [String] {
        guard let outer = elements(bytes, 0..<bytes.count).first, outer.0 == 0x30 else { return [] }
        var oids: [String] = []
        for statement in elements(bytes, outer.1) where statement.0 == 0x30 {
            let parts = elements(bytes, statement.1)
            guard let first = parts.first, first.0 == 0x06, let id = oid(bytes, first.1) else { continue }
            oids.append(id)
            if id == "0.4.0.1862.1.6", parts.count > 1, parts[1].0 == 0x30 {
                oids += elements(bytes, parts[1].1).filter { $0.0 == 0x06 }.compactMap { oid(bytes, $0.1) }
            }
        }
        return oids
    }
}

import COpenSSL

/// An RFC 3161 TimeStampResp: the PKI status and, when granted, the token. With the request at
/// hand it also checks that the token answers it (same imprint, nonce echoed), as libdigidocpp does.
public struct TimeStampResponse: Sendable {
    public enum Status: Int, Sendable {
        case granted = 0, grantedWithMods, rejection, waiting, revocationWarning, revocationNotification
    }

    public let status: Status
    public let token: TimeStampToken

    /// Throws, with the TSA's own status text, unless the status is granted or grantedWithMods.
    public init(der: [UInt8], request: TimeStampRequest? = nil) throws {
        let response = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_TS_RESP(nil, &cursor, buffer.count)
        }
        guard let response else { throw CryptoError("the time-stamp service's reply is not an RFC 3161 TimeStampResp") }
        defer { TS_RESP_free(response) }
        guard let info = TS_RESP_get_status_info(response),
              let status = Status(rawValue: ASN1_INTEGER_get(TS_STATUS_INFO_get0_status(info))) else {
            throw CryptoError("the time-stamp service's reply has an unknown status")
        }
        guard status == .granted || status == .grantedWithMods else {
            throw CryptoError("the time-stamp service did not grant the time-stamp: " + Self.explain(status, info))
        }
        guard let pkcs7 = TS_RESP_get_token(response),
              let tokenDER = TimeStampAndOCSP.der({ i2d_PKCS7(pkcs7, $0) }) else {
            throw CryptoError("the time-stamp service granted a time-stamp but sent no token")
        }
        self.status = status
        token = try TimeStampToken(der: tokenDER)
        if let request { try check(answers: request) }
    }

    private func check(answers request: TimeStampRequest) throws {
        guard token.imprintAlgorithm == request.algorithm, token.imprint == request.imprint else {
            throw CryptoError("the time-stamp service stamped other data than asked (message imprint differs)")
        }
        guard token.nonce == request.nonce else {
            throw CryptoError("the time-stamp does not echo our nonce (a replayed or foreign reply)")
        }
    }

    /// "rejection (unknown hash) [badAlg]": the status, the TSA's text and the failure bits.
    private static func explain(_ status: Status, _ info: OpaquePointer) -> String {
        var text = "\(status)"
        if let strings = TS_STATUS_INFO_get0_text(info) {
            let lines = (0..<copenssl_sk_utf8string_num(strings)).map {
                String(decoding: TimeStampAndOCSP.bytes(copenssl_sk_utf8string_value(strings, $0)), as: UTF8.self)
            }
            if !lines.isEmpty { text += " (\(lines.joined(separator: "; ")))" }
        }
        let names: [(Int32, String)] = [(0, "badAlg"), (2, "badRequest"), (5, "badDataFormat"), (14, "timeNotAvailable"),
                                        (15, "unacceptedPolicy"), (16, "unacceptedExtension"),
                                        (17, "addInfoNotAvailable"), (25, "systemFailure")]
        if let bits = TS_STATUS_INFO_get0_failure_info(info) {
            let failures = names.filter { ASN1_BIT_STRING_get_bit(bits, $0.0) == 1 }.map(\.1)
            if !failures.isEmpty { text += " [\(failures.joined(separator: ", "))]" }
        }
        return text
    }
}

import Crypto
import Foundation

/// A v3 device link as a QR code carries it (RP API 3.2.3, device_link_flows and authcode; the
/// spec's §6): the parameters in their fixed order, unencoded, then the authCode, the Base64URL
/// HMAC-SHA256 under the decoded session secret of the eight `|`-joined fields. The secret stays
/// here (a SecretBytes, wiped with this value); only finished links leave.
struct SmartIDDeviceLink: Sendable {
    enum SessionType: String, Sendable { case sign, cert }

    let base: String
    let sessionToken: String
    let secret: SecretBytes
    let sessionType: SessionType
    let schemeName: String
    let relyingPartyName: String
    /// Signature sessions: the request's `signatureProtocol`, `digest` and `interactions` as sent.
    var signatureProtocol = "", digest = "", interactions = ""
    /// Set only by a relying party that is a broker (never asicfs); here for the documented vectors.
    var brokeredRelyingPartyName = ""
    var lang = "eng"

    init(base: String, sessionToken: String, sessionSecret: String, sessionType: SessionType,
         schemeName: String, relyingPartyName: String) throws {
        // They go into a URL unencoded: only what the spec lets them hold.
        guard sessionToken.count >= 24, sessionToken.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw SigningError("Smart-ID: the service's sessionToken is malformed")
        }
        guard let url = URLComponents(string: base), url.scheme == "https", url.query == nil, url.fragment == nil else {
            throw SigningError("Smart-ID: the service's deviceLinkBase is not an https URL without query ('\(SmartIDFailure.printable(base))')")
        }
        guard let key = Data(base64Encoded: sessionSecret), key.count >= 16 else {
            throw SigningError("Smart-ID: the service's sessionSecret is not Base64")
        }
        self.base = base
        self.sessionToken = sessionToken
        secret = SecretBytes([UInt8](key))
        self.sessionType = sessionType
        self.schemeName = schemeName
        self.relyingPartyName = relyingPartyName
    }

    /// The QR code's link `elapsedSeconds` after the session-creating answer arrived.
    func qrLink(elapsedSeconds: Int) throws -> String {
        let unprotected = base + "?deviceLinkType=QR&elapsedSeconds=\(elapsedSeconds)&sessionToken=\(sessionToken)"
            + "&sessionType=\(sessionType.rawValue)&version=1.0&lang=\(lang)"
        return unprotected + "&authCode=" + (try authCode(unprotected))
    }

    func authCode(_ unprotectedLink: String) throws -> String {
        let fields = [schemeName, signatureProtocol, digest, Data(relyingPartyName.utf8).base64EncodedString(),
                      brokeredRelyingPartyName.isEmpty ? "" : Data(brokeredRelyingPartyName.utf8).base64EncodedString(),
                      interactions, "" /* initialCallbackUrl: empty for QR */, unprotectedLink]
        let mac = try HMAC.mac(key: secret, Array(fields.joined(separator: "|").utf8))
        return Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

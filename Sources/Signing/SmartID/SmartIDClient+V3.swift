import Crypto
import Foundation

/// The requests of Smart-ID's RP API v3 that signing needs (RP API 3.2.3, the spec's §3–§5).
extension SmartIDClient {
    /// A device-link session's parts: the link is rebuilt each second from them.
    struct DeviceLinkSession {
        let sessionID: String
        let link: SmartIDDeviceLink
        /// When the answer arrived: `elapsedSeconds` counts from here.
        let received: Date
    }

    /// `POST signature/certificate-choice/notification/etsi/PNO…`: every device of the person may answer.
    func startCertificateChoiceV3(person account: SmartIDAccount) throws -> String {
        try startSession("/signature/certificate-choice/notification/" + account.pathSuffix, qualified(nonce: true))
    }

    /// `POST signature/certificate/{document}`: the account's certificate at once, no user action.
    func certificateV3(document: String) throws -> SmartIDSessionStatus.Certificate {
        let answer = try service.post("/signature/certificate/document/" + document, qualified(nonce: false), timeout: 30)
        guard answer.status == 200 else { throw SmartIDFailure.status(answer.status, creating: true) }
        let state = try SmartIDFailure.required(answer.json["state"] as? String, "state")
        guard state == "OK" else {
            throw state == "DOCUMENT_UNUSABLE" ? SmartIDFailure.endResult(state)
                : SigningError("Smart-ID: the certificate request ended '\(SmartIDFailure.printable(state))'")
        }
        let cert = try SmartIDFailure.required(answer.json["cert"] as? [String: Any], "cert")
        return SmartIDSessionStatus.Certificate(value: cert["value"] as? String, certificateLevel: cert["certificateLevel"] as? String)
    }

    /// `POST signature/certificate-choice/device-link/anonymous`: whoever scans the QR code picks the account.
    func startCertificateChoiceDeviceLink() throws -> DeviceLinkSession {
        let (sessionID, json) = try startSessionAnswer("/signature/certificate-choice/device-link/anonymous", qualified(nonce: true))
        let received = Date()
        let link = try SmartIDDeviceLink(
            base: try SmartIDFailure.required(json["deviceLinkBase"] as? String, "deviceLinkBase"),
            sessionToken: try SmartIDFailure.required(json["sessionToken"] as? String, "sessionToken"),
            sessionSecret: try SmartIDFailure.required(json["sessionSecret"] as? String, "sessionSecret"),
            sessionType: .cert, schemeName: schemeName, relyingPartyName: relyingPartyName)
        return DeviceLinkSession(sessionID: sessionID, link: link, received: received)
    }

    /// `POST signature/notification/document/{doc}`: the session and the code the service made.
    func startSignatureNotification(document: String, digest: [UInt8], algorithm: SignatureAlgorithm,
                                    interactions: [[String: String]]) throws -> (sessionID: String, code: String) {
        let (sessionID, json) = try startSessionAnswer("/signature/notification/document/" + document,
                                                       try signatureBody(digest, algorithm, interactions))
        let vc = try SmartIDFailure.required(json["vc"] as? [String: Any], "vc")
        let code = try SmartIDFailure.required(vc["value"] as? String, "vc.value")
        // Shown to the user and written to status files: only what numeric4 codes are.
        guard (1...8).contains(code.count), code.allSatisfy({ $0.isASCII && ($0.isNumber || $0.isLetter) }) else {
            throw SigningError("Smart-ID: the service's verification code is malformed ('\(SmartIDFailure.printable(code))')")
        }
        return (sessionID, code)
    }

    /// `POST signature/notification/linked/{doc}`, right after the device-link certificate choice.
    func startSignatureLinked(document: String, linkedSessionID: String, digest: [UInt8], algorithm: SignatureAlgorithm,
                              interactions: [[String: String]]) throws -> String {
        var body = try signatureBody(digest, algorithm, interactions)
        body["linkedSessionID"] = linkedSessionID
        return try startSession("/signature/notification/linked/" + document, body)
    }

    private func qualified(nonce: Bool) -> [String: Any] {
        var body = relyingParty
        body["certificateLevel"] = "QUALIFIED"
        if nonce { body["nonce"] = Self.nonce() }
        return body
    }

    private func signatureBody(_ digest: [UInt8], _ algorithm: SignatureAlgorithm,
                               _ interactions: [[String: String]]) throws -> [String: Any] {
        var parameters: [String: Any] = ["digest": Data(digest).base64EncodedString()]
        switch algorithm.scheme {
        case .rsaPSS:
            parameters["signatureAlgorithm"] = "rsassa-pss"
            parameters["signatureAlgorithmParameters"] = ["hashAlgorithm": algorithm.digest.rawValue]
        default:
            parameters["signatureAlgorithm"] = try SmartIDV3Signer.pkcs1Name(algorithm.digest)
        }
        let json = try JSONSerialization.data(withJSONObject: interactions, options: [.sortedKeys, .withoutEscapingSlashes])
        var body = qualified(nonce: true)
        body["signatureProtocol"] = "RAW_DIGEST_SIGNATURE"
        body["signatureProtocolParameters"] = parameters
        body["interactions"] = json.base64EncodedString()
        return body
    }
}

/// What to tell the user when Smart-ID ends a session without a result, or answers with an HTTP
/// error: one sentence each, worded after DigiDoc4's (RP API v2, the spec's §9).
enum SmartIDFailure {
    /// A completed session whose `result.endResult` is not OK (compared case-insensitively, as
    /// SK's Java client does).
    static func endResult(_ endResult: String) -> SigningError {
        let sentence = switch endResult.uppercased() {
        case "USER_REFUSED", "USER_REFUSED_DISPLAYTEXTANDPIN", "USER_REFUSED_VC_CHOICE", "USER_REFUSED_CONFIRMATIONMESSAGE",
             "USER_REFUSED_CONFIRMATIONMESSAGE_WITH_VC_CHOICE", "USER_REFUSED_CERT_CHOICE":
            "signing was cancelled in the Smart-ID app"
        case "TIMEOUT": "the request expired before it was confirmed in the Smart-ID app; try again"
        case "WRONG_VC": "a wrong verification code was chosen in the Smart-ID app; signing aborted"
        case "DOCUMENT_UNUSABLE":
            "this Smart-ID account cannot be used for the request; check the Smart-ID app or contact Smart-ID support"
        case "REQUIRED_INTERACTION_NOT_SUPPORTED_BY_APP":
            "the Smart-ID app is too old to show this request; update the Smart-ID app"
        default: "the session ended with '\(printable(endResult))', a result asicfs does not know"
        }
        return SigningError("Smart-ID: " + sentence)
    }

    /// A status other than 200. `creating` tells a session-creating POST (404: no such account)
    /// from a session status read (404: the session is unknown or expired).
    static func status(_ status: Int, creating: Bool) -> SigningError {
        let sentence = switch status {
        case 400: "the service refused the request as malformed (HTTP 400); this is a bug in asicfs, please report it"
        case 401: "the service does not accept this relying party (HTTP 401): check smart-id.relying-party-uuid and "
            + "smart-id.relying-party-name, and that this computer's address is allowed to use them"
        case 403: "the relying party is not allowed to make this request (HTTP 403): check the Smart-ID access "
            + "settings (smart-id.relying-party-uuid, smart-id.relying-party-name)"
        case 404 where creating: "no Smart-ID account was found for this person or document number"
        case 404: "the Smart-ID session is unknown or has expired; try again"
        case 471: "this person has no qualified Smart-ID account; a qualified Smart-ID account is needed to sign"
        case 472: "open the Smart-ID app or the Smart-ID self-service portal and follow its instructions, then try again"
        case 480: "the service no longer supports the API version asicfs uses (HTTP 480); asicfs needs an update"
        case 580: "the service is under maintenance (HTTP 580); try again later"
        case 500...599: "the service failed with an internal error (HTTP \(status)); try again later"
        default: "the service answered with HTTP status \(status), which RP API v2 does not describe"
        }
        return SigningError("Smart-ID: " + sentence)
    }

    /// A member the answer must hold, or the sentence naming it.
    static func required<Value>(_ value: Value?, _ member: String) throws -> Value {
        guard let value else { throw SigningError("Smart-ID: the service's answer lacks \(member)") }
        return value
    }

    /// Values from the service go into messages only as short printable text.
    static func printable(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7f }.prefix(60).map(Character.init))
    }
}

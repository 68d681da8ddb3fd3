import Foundation

/// Every way a Mobile-ID signing can end badly, as the one sentence the user reads (modelled on
/// DigiDoc4's messages; spec/mobile-id.md §4-§7).
enum MobileIDFailure {
    /// The MID-REST call that got the answer, for status codes that mean different things per call.
    enum Call { case certificate, signature, session }

    static let cancelled = SigningError("the signing was cancelled; the container is unchanged")

    /// A session's end result other than OK.
    static func result(_ code: String) -> SigningError {
        switch code {
        case "TIMEOUT", "EXPIRED_TRANSACTION":
            SigningError("Mobile-ID: the request expired on the phone before it was confirmed; try again")
        case "NOT_MID_CLIENT":
            SigningError("Mobile-ID: this phone number and personal code are not an active Mobile-ID user")
        case "USER_CANCELLED":
            SigningError("Mobile-ID: signing was cancelled on the phone")
        case "SIGNATURE_HASH_MISMATCH":
            SigningError("Mobile-ID failed: the SIM's Mobile-ID configuration differs from the service's; contact your "
                + "mobile operator (demo numbers: re-register the test certificate at https://demo.sk.ee/MIDCertsReg/)")
        case "PHONE_ABSENT":
            SigningError("Mobile-ID: the phone is not reachable (switched off or out of coverage); try again")
        case "DELIVERY_ERROR":
            SigningError("Mobile-ID: could not deliver the request to the phone; try again")
        case "SIM_ERROR":
            SigningError("Mobile-ID: SIM card error; try again")
        default:
            SigningError("Mobile-ID: technical error: the session ended with '\(printable(code))'")
        }
    }

    static func notAUser(phone: String) -> SigningError {
        SigningError("Mobile-ID: \(phone) with this personal code is not a Mobile-ID user (no active Mobile-ID certificate)")
    }

    static func userDidNotConfirm(within seconds: Double) -> SigningError {
        SigningError("Mobile-ID: the user did not confirm within \(format(seconds)) s")
    }

    static func noAnswer(within seconds: Double) -> SigningError {
        SigningError("Mobile-ID: no answer about the signing within \(format(seconds)) s (mobile-id.timeout); "
            + "the service stopped responding")
    }

    static func unreadable(_ what: String) -> SigningError {
        SigningError("Mobile-ID answered something asicfs cannot read (\(what))")
    }

    /// A status other than 200. The service's `error` text is for developers; it is quoted, short.
    static func http(_ answer: JSONService.Answer, call: Call, url: String) -> SigningError {
        let status = answer.status
        let said = (answer.json["error"] as? String).map { ": " + printable($0) } ?? ""
        switch (status, call) {
        case (400, .session):
            return SigningError("Mobile-ID refused the status request as malformed (HTTP 400\(said))")
        case (400, _) where said.contains("phoneNumber"):
            return SigningError("Mobile-ID refused the phone number: include the country code (HTTP 400\(said))")
        case (400, _):
            return SigningError("Mobile-ID refused the request as malformed (HTTP 400\(said))")
        case (401, .session):
            return SigningError("Mobile-ID refused the status request of this session (HTTP 401\(said))")
        case (401, _):
            return SigningError("Mobile-ID did not accept this relying party (HTTP 401\(said)): check "
                + "mobile-id.relying-party-name and mobile-id.relying-party-uuid")
        case (404, .session):
            return SigningError("Mobile-ID no longer knows this signing session (HTTP 404; sessions expire after "
                + "5 minutes): start the signing again")
        case (404, _), (405, _):
            return SigningError("Mobile-ID does not offer this request at \(url) (HTTP \(status)): check mobile-id.url")
        case (500, _):
            return SigningError("Mobile-ID had an internal error (HTTP 500\(said)): start the signing again later")
        case (502...504, _):
            return SigningError("Mobile-ID is unavailable (HTTP \(status)): try again later")
        default:
            return SigningError("Mobile-ID answered HTTP \(status)\(said)")
        }
    }

    /// The answer's JSON object; an answer that is not one is unreadable.
    static func object(_ answer: JSONService.Answer) throws -> [String: Any] {
        if !answer.json.isEmpty { return answer.json }
        guard (try? JSONSerialization.jsonObject(with: Data(answer.body))) is [String: Any] else {
            throw unreadable("the answer is not a JSON object")
        }
        return answer.json
    }

    /// Text from the service, safe to show: one line, at most 120 characters.
    static func printable(_ text: String) -> String {
        let line = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
        return line.count > 120 ? line.prefix(120) + "…" : line
    }

    /// "150", "2.5": seconds as the configuration gave them.
    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

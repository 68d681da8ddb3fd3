extension SmartIDFailure {
    /// A completed v3 session whose `result.endResult` is not OK (RP API 3.2.3, the spec's §10):
    /// v3's own results first, then those it shares with v2.
    static func endResultV3(_ endResult: String, interaction: String?) -> SigningError {
        let sentence: String
        switch endResult.uppercased() {
        case "USER_REFUSED_INTERACTION":
            let screen = interaction.map { " (on the \(printable($0)) screen)" } ?? ""
            sentence = "signing was cancelled in the Smart-ID app\(screen)"
        case "PROTOCOL_FAILURE": sentence = "the service rejected the request as a technical error (PROTOCOL_FAILURE); please report it"
        case "EXPECTED_LINKED_SESSION":
            sentence = "the Smart-ID app expected the signature linked to its QR code and got another request; try again"
        case "SERVER_ERROR": sentence = "the service failed with a technical error (SERVER_ERROR); try again later"
        case "ACCOUNT_UNUSABLE": sentence = "this Smart-ID account cannot be used at the moment; check the Smart-ID app"
        default: return SmartIDFailure.endResult(endResult)
        }
        return SigningError("Smart-ID: " + sentence)
    }
}

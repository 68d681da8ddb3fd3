/// The phone dialog's language (the service's three-letter codes).
public enum MobileIDLanguage: String, Sendable, CaseIterable {
    case estonian = "EST", english = "ENG", russian = "RUS", lithuanian = "LIT"
}

/// Who signs with Mobile-ID and what the phone shows: `phone=+372... idcode=...
/// [language=EST|ENG|RUS|LIT] [message=...]`, checked in form before anything is sent.
public struct MobileIDParameters: Sendable, Equatable {
    /// `+` and 8-30 digits, spaces removed.
    public let phone: String
    public let personalCode: String
    public let language: MobileIDLanguage
    public let displayText: MobileIDDisplayText?

    public init(phone: String, personalCode: String, language: MobileIDLanguage? = nil,
                message: String? = nil) throws(SigningParameterError) {
        self.phone = try Self.checkedPhone(phone)
        let country = Self.country(ofPhone: self.phone)
        if let problem = PersonalCode.problem(personalCode, country: country ?? "EE") {
            throw SigningParameterError("mobile-id: idcode: \(problem)")
        }
        self.personalCode = personalCode
        let chosen = language ?? (country == "LT" ? .lithuanian : country == "EE" ? .estonian : .english)
        // The service shows English instead of LIT on +372 and of EST on +370: say so rather than surprise.
        if chosen == .lithuanian && country == "EE" {
            throw SigningParameterError("mobile-id: language: LIT is not shown on Estonian (+372) numbers "
                + "(the phone would use English); use EST, ENG or RUS")
        }
        if chosen == .estonian && country == "LT" {
            throw SigningParameterError("mobile-id: language: EST is not shown on Lithuanian (+370) numbers "
                + "(the phone would use English); use LIT, ENG or RUS")
        }
        self.language = chosen
        if let message, !message.isEmpty {
            displayText = try MobileIDDisplayText(message)
        } else {
            displayText = nil
        }
    }

    /// From the `key=value` parameters of `.asicfs/sign/mobile-id` or `asicfs sign --method mobile-id`.
    public init(_ parameters: SigningParameters) throws(SigningParameterError) {
        guard let phone = parameters["phone"], !phone.isEmpty else {
            throw SigningParameterError("mobile-id: 'phone=+372...' is required (the Mobile-ID phone number with its country code)")
        }
        guard let code = parameters["idcode"], !code.isEmpty else {
            throw SigningParameterError("mobile-id: 'idcode=...' is required (the signer's personal code)")
        }
        var language: MobileIDLanguage? = nil
        if let text = parameters["language"] {
            guard let known = MobileIDLanguage(rawValue: text.uppercased()) else {
                throw SigningParameterError("mobile-id: language must be EST, ENG, RUS or LIT, not '\(text)'")
            }
            language = known
        }
        try self.init(phone: phone, personalCode: code, language: language, message: parameters["message"])
    }

    /// The number as the service takes it: `^\+\d{8,30}$` once spaces are removed.
    static func checkedPhone(_ text: String) throws(SigningParameterError) -> String {
        let phone = String(text.filter { !$0.isWhitespace })
        let digits = phone.hasPrefix("+") ? phone.dropFirst() : Substring(phone)
        let allDigits = !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
        if allDigits && !phone.hasPrefix("+") {
            throw SigningParameterError("mobile-id: phone '\(text)' lacks the country code: include the country code "
                + "with a leading + (e.g. +372 for Estonia, +370 for Lithuania)")
        }
        guard allDigits, (8...30).contains(digits.count) else {
            throw SigningParameterError("mobile-id: phone '\(text)' must be + and the country code followed by the number, "
                + "8 to 30 digits in all (e.g. +37200000766)")
        }
        return phone
    }

    /// EE or LT for Estonian and Lithuanian numbers; nil for others (either kind of code is fine).
    static func country(ofPhone phone: String) -> String? {
        if phone.hasPrefix("+372") { return "EE" }
        if phone.hasPrefix("+370") { return "LT" }
        return nil
    }
}

/// Which Smart-ID account signs: a person (every device of theirs may answer the certificate
/// choice) or one account, by its document number.
public enum SmartIDAccount: Sendable, Equatable {
    /// `country` is EE, LV or LT; `code` the personal code (Latvian ones as DDMMYY-CNNNN).
    case person(country: String, code: String)
    case document(String)
    /// `qr=yes` (RP API v3 only): whoever scans the QR code with the Smart-ID app picks the account.
    case scanner

    /// The object reference of the RP API (`etsi/PNOEE-…` or `document/PNOEE-…`); none for `scanner`.
    var pathSuffix: String {
        switch self {
        case .person(let country, let code): "etsi/PNO\(country)-\(code)"
        case .document(let number): "document/\(number)"
        case .scanner: ""
        }
    }
}

/// What the phone shows before the PIN: the text and the PIN on one screen (`pin`), or the text
/// on a confirmation screen first (`confirmation`, falling back to `pin` on apps without it).
public enum SmartIDDisplay: String, Sendable, CaseIterable {
    case pin, confirmation
}

/// A Smart-ID signing request as written to `sign/smart-id`: checked for form here, before
/// anything is sent, with a sentence naming the field and why when it is wrong.
public struct SmartIDRequest: Sendable, Equatable {
    public let account: SmartIDAccount
    public let display: SmartIDDisplay
    /// The text on the phone (`message=`, else a default).
    public let message: String

    public static let defaultMessage = "Sign a document with asicfs"
    /// The longest texts the phone shows: displayText60 (PIN screen), displayText200 (confirmation).
    static let pinTextLimit = 60, confirmationTextLimit = 200

    public init(_ parameters: SigningParameters) throws(SigningParameterError) {
        let qrText = parameters["qr"] ?? "no"
        guard qrText == "yes" || qrText == "no" else { throw Self.problem("qr must be 'yes' or 'no', not '\(qrText)'") }
        if qrText == "yes" {
            guard parameters["idcode"] == nil, parameters["document"] == nil else {
                throw Self.problem("qr=yes lets whoever scans the code choose the account: leave out idcode= and document=")
            }
            account = .scanner
        } else {
            account = try Self.account(parameters)
        }
        let displayText = parameters["display"] ?? SmartIDDisplay.pin.rawValue
        guard let display = SmartIDDisplay(rawValue: displayText) else {
            throw Self.problem("display must be 'pin' or 'confirmation', not '\(displayText)'")
        }
        self.display = display
        message = parameters["message"] ?? Self.defaultMessage
        try Self.check(message: message, display: display)
    }

    static func account(_ parameters: SigningParameters) throws(SigningParameterError) -> SmartIDAccount {
        switch (parameters["idcode"], parameters["document"]) {
        case (let code?, nil): return try person(code: code, country: parameters["country"])
        case (nil, let number?): return try document(number)
        case (.some, .some): throw problem("give either idcode= or document=, not both")
        case (nil, nil):
            throw problem("say who signs: 'country=EE idcode=...' (EE, LV or LT), 'document=PNOEE-...', or qr=yes")
        }
    }

    /// `allowedInteractionsOrder` of the signature request, most preferred first.
    var interactions: [[String: String]] {
        let pinScreen = ["type": "displayTextAndPIN", "displayText60": Self.shortened(message, to: Self.pinTextLimit)]
        switch display {
        case .pin: return [pinScreen]
        case .confirmation: return [["type": "confirmationMessage", "displayText200": message], pinScreen]
        }
    }

    static func person(code: String, country: String?) throws(SigningParameterError) -> SmartIDAccount {
        guard let country else { throw problem("idcode= needs country=EE, LV or LT (the country of the personal code)") }
        let upper = country.uppercased()
        guard ["EE", "LV", "LT"].contains(upper) else {
            throw problem("country must be EE, LV or LT (the country of the personal code), not '\(country)'")
        }
        if let why = PersonalCode.problem(code, country: upper) { throw problem("idcode: \(why)") }
        return .person(country: upper, code: upper == "LV" ? latvianForm(code) : code)
    }

    /// `PNO{EE|LV|LT}-{personal code}[-{account suffix}]`, e.g. PNOEE-30303039914-MOCK-Q.
    static func document(_ number: String) throws(SigningParameterError) -> SmartIDAccount {
        let form = "a document number looks like PNOEE-30303039914-MOCK-Q"
        guard number.count <= 64, number.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw problem("document: '\(number)' holds characters a document number has not (\(form))")
        }
        let country = String(number.dropFirst(3).prefix(2))
        guard number.hasPrefix("PNO"), ["EE", "LV", "LT"].contains(country), number.dropFirst(5).first == "-" else {
            throw problem("document: '\(number)' does not start with PNOEE-, PNOLV- or PNOLT- (\(form))")
        }
        let rest = number.dropFirst(6)
        let code = String(rest.prefix(country == "LV" ? 12 : 11))
        if let why = PersonalCode.problem(code, country: country) {
            throw problem("document: the personal code in '\(number)' is not valid: \(why)")
        }
        let suffix = rest.dropFirst(code.count)
        guard suffix.isEmpty || (suffix.first == "-" && suffix.count > 1) else {
            throw problem("document: '\(number)' has '\(suffix)' after the personal code (\(form))")
        }
        return .document(number)
    }

    static func check(message: String, display: SmartIDDisplay) throws(SigningParameterError) {
        guard !message.isEmpty else { throw problem("message is empty") }
        guard !message.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw problem("message must be one line of text (it holds a control character)")
        }
        // The service counts UTF-16 units, as Java does.
        let length = message.utf16.count
        switch display {
        case .pin where length > pinTextLimit:
            throw problem("message has \(length) characters; with display=pin the phone shows at most \(pinTextLimit) "
                + "(display=confirmation allows \(confirmationTextLimit))")
        case .confirmation where length > confirmationTextLimit:
            throw problem("message has \(length) characters; the phone shows at most \(confirmationTextLimit)")
        default: break
        }
    }

    /// Latvian codes go to the service as DDMMYY-CNNNN whether or not the user wrote the hyphen.
    static func latvianForm(_ code: String) -> String {
        let digits = code.filter { $0 != "-" }
        return digits.prefix(6) + "-" + digits.dropFirst(6)
    }

    /// `text` cut to `limit` UTF-16 units, ending with "…" when cut (for the PIN-screen fallback).
    static func shortened(_ text: String, to limit: Int) -> String {
        guard text.utf16.count > limit else { return text }
        var result = ""
        for character in text {
            if result.utf16.count + character.utf16.count + 1 > limit { break }
            result.append(character)
        }
        return result + "…"
    }

    static func problem(_ why: String) -> SigningParameterError { SigningParameterError("smart-id: \(why)") }
}

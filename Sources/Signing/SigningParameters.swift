import XAdES

/// Why a signing request was refused before anything started (EINVAL in the filesystem,
/// exit code 2 on the command line).
public struct SigningParameterError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// `key=value` parameters of a signing request, as written to `.asicfs/sign/<method>` or given to
/// `asicfs sign`. Values may be quoted ("..." or '...') to hold spaces.
public struct SigningParameters: Sendable, Equatable {
    public private(set) var values: [String: String] = [:]

    /// Parameters every method accepts: the signer's role and production place.
    public static let commonKeys: Set<String> = ["role", "city", "state", "postal-code", "country"]

    public init(_ values: [String: String] = [:]) { self.values = values }

    public subscript(key: String) -> String? { values[key] }

    /// Parses `text` and checks every key against `allowed` (plus the common keys).
    public static func parse(_ text: String, method: String, allowed: Set<String>) throws -> SigningParameters {
        var parameters = SigningParameters()
        for token in try tokens(text) {
            guard let equals = token.firstIndex(of: "=") else {
                throw SigningParameterError("\(method): expected key=value, got '\(token)'")
            }
            let key = String(token[..<equals])
            let value = String(token[token.index(after: equals)...])
            guard allowed.contains(key) || commonKeys.contains(key) else {
                let known = (allowed.union(commonKeys)).sorted().joined(separator: ", ")
                throw SigningParameterError("\(method): unknown parameter '\(key)' (known: \(known))")
            }
            guard parameters.values[key] == nil || key == "role" else {
                throw SigningParameterError("\(method): '\(key)' is given twice")
            }
            parameters.values[key] = parameters.values[key].map { $0 + "\u{0}" + value } ?? value
        }
        return parameters
    }

    /// The role and place parameters as XAdES signer details (`role` may repeat).
    public var signerDetails: SignerDetails {
        var details = SignerDetails()
        details.roles = values["role"].map { $0.split(separator: "\u{0}").map(String.init) } ?? []
        details.city = values["city"]
        details.stateOrProvince = values["state"]
        details.postalCode = values["postal-code"]
        details.country = values["country"]
        return details
    }

    /// Splits on whitespace outside quotes; quotes are removed.
    static func tokens(_ text: String) throws -> [String] {
        var tokens: [String] = []
        var current = ""
        var quote: Character? = nil
        var inToken = false
        for character in text {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                inToken = true
            } else if character.isWhitespace {
                if inToken { tokens.append(current) }
                current = ""
                inToken = false
            } else {
                current.append(character)
                inToken = true
            }
        }
        if quote != nil { throw SigningParameterError("unbalanced quote in the parameters") }
        if inToken { tokens.append(current) }
        return tokens
    }
}

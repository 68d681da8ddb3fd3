import ASiC
import Configuration
import Foundation
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

    /// Parameters whose values are paths: a leading `~/` is the home folder, as in the config file.
    public static let pathKeys: Set<String> = ["file", "passphrase-file", "pin-file", "key-file", "cert-file", "secret-file", "password-file"]

    /// Parses a control file's one line (`key=value key="value with spaces"`; see `tokens`)
    /// and checks every key against `allowed` (plus the common keys).
    public static func parse(_ text: String, method: String, allowed: Set<String>,
                             home: String = Configuration.homeFolder()) throws -> SigningParameters {
        try parse(arguments: try tokens(text), method: method, allowed: allowed, home: home)
    }

    /// Parses command-line arguments: each one is one `key=value`, split at the first `=` and
    /// taken literally (the shell has done the quoting: no splitting, no quote removal here).
    public static func parse(arguments: [String], method: String, allowed: Set<String>,
                             home: String = Configuration.homeFolder()) throws -> SigningParameters {
        var parameters = SigningParameters()
        for token in arguments {
            guard let equals = token.firstIndex(of: "=") else {
                throw SigningParameterError("\(method): expected key=value, got '\(token)'")
            }
            let key = String(token[..<equals])
            var value = String(token[token.index(after: equals)...])
            if pathKeys.contains(key), value.hasPrefix("~/") { value = home + value.dropFirst(1) }
            guard allowed.contains(key) || commonKeys.contains(key) else {
                let known = allowed.union(commonKeys)
                let suggestion = Suggestion.closest(to: key, among: known).map { "; did you mean '\($0)'?" } ?? ""
                throw SigningParameterError("\(method): unknown parameter '\(key)'\(suggestion) (known: \(known.sorted().joined(separator: ", ")))")
            }
            // These go into the signature's XML, which cannot hold control characters: refused
            // now, not when the signature is built after the request was accepted.
            if commonKeys.contains(key), let bad = value.unicodeScalars.first(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
                throw SigningParameterError("\(method): \(key)= cannot hold the control character "
                    + "\(PrintableText.escaped(String(bad))) ('\(PrintableText.escaped(value))')")
            }
            guard parameters.values[key] == nil || key == "role" else {
                throw SigningParameterError("\(method): '\(key)' is given twice")
            }
            parameters.values[key] = parameters.values[key].map { $0 + "\u{0}" + value } ?? value
        }
        return parameters
    }

    /// A descriptor parameter (`pin-fd=N`, …): an open descriptor to read one secret line from.
    /// Only on the command line: a mount's daemon has none of the writer's descriptors, and
    /// pinentry asks there.
    public func descriptor(_ key: String, method: String, commandLine: Bool, asking what: String) throws -> Int32? {
        guard let text = values[key] else { return nil }
        guard let fd = Int32(text), fd >= 0 else {
            throw SigningParameterError("\(method): \(key)= takes a descriptor number (e.g. \(key)=3), not '\(text)'")
        }
        guard commandLine else {
            throw SigningParameterError("\(method): \(key)= is for the command line; in a mount pinentry asks for \(what)")
        }
        return fd
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

    /// The control files' one-line format: parameters separated by white space; a value (or any
    /// part of a parameter) in "double" or 'single' quotes keeps its spaces, and the other kind
    /// of quote inside it (`role="O'Brien's deputy"`); the quotes themselves are removed. There
    /// are no backslash escapes.
    public static func tokens(_ text: String) throws -> [String] {
        let scanned = scan(text)
        if scanned.quoteOpen { throw SigningParameterError("unbalanced quote in the parameters") }
        return scanned.ended + (scanned.unfinished.map { [$0] } ?? [])
    }

    /// What `tokens` finds, telling the parameters already ended by white space from the last
    /// one, which more text may still extend (a request written in pieces).
    public struct Scan: Equatable {
        public var ended: [String] = []
        /// The last parameter when no white space follows it (or a quote is still open).
        public var unfinished: String? = nil
        public var quoteOpen = false
    }

    public static func scan(_ text: String) -> Scan {
        var scanned = Scan()
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
                if inToken { scanned.ended.append(current) }
                current = ""
                inToken = false
            } else {
                current.append(character)
                inToken = true
            }
        }
        scanned.quoteOpen = quote != nil
        if inToken { scanned.unfinished = current }
        return scanned
    }

    /// In a mount: path parameters must be absolute, since the daemon does not share the writer's
    /// working folder (`~/` is the home folder, already expanded), and descriptors (`pin-fd=`)
    /// are the writer's, not the daemon's.
    public func checkForMount(method: String) throws {
        if values["pin-fd"] != nil {
            throw SigningParameterError("\(method): pin-fd= is for the command line; in a mount pinentry asks for the PIN "
                + "(or the reader's PIN pad takes it)")
        }
        for key in Self.pathKeys.sorted() {
            guard let value = values[key], !value.hasPrefix("/") else { continue }
            throw SigningParameterError("\(method): \(key)= takes an absolute path (starting with / or ~/) in a mount, "
                + "not '\(PrintableText.escaped(value))': the mount does not know the writer's current folder")
        }
    }
}

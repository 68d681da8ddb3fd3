import Foundation

/// The settings of asicfs: `key = value` lines from the config file, overridden by `-o key=value`.
/// Unknown keys are errors that name the key, so a typo never silently does nothing.
public struct Configuration: Sendable, Equatable {
    /// Every key asicfs understands, with a one-line meaning (shown by `asicfs --help`).
    public static let keys: [(key: String, meaning: String)] = [
        ("tsa-url", "RFC 3161 time-stamp service used for LT signatures"),
        ("ocsp-url", "OCSP responder (default: the one in the signer certificate's AIA)"),
        ("profile", "signature profile: LT (default) or B"),
        ("tsl", "trusted list to validate against: path or URL, test (the Estonian test list) or none; default the EU list"),
        ("tsl-cert", "PEM file: the certificate(s) allowed to sign the trusted list (replaces the built-in signers of the EU and test lists)"),
        ("tsl-signer-sha256", "SHA-256 fingerprint(s), comma-separated, of further certificates allowed to sign the trusted list (the list carries the certificate)"),
        ("trust-anchors", "PEM file or folder of extra trusted CA, OCSP and TSA certificates"),
        ("ocsp-tm-policy", "certificate policy OID(s), comma-separated, of OCSP responders whose answers make a BDOC time-mark (default 1.3.6.1.4.1.10015.4.1.2; tsl = test adds SK's test 1.3.6.1.4.1.10015.3.1.1)"),
        ("cache-dir", "where downloaded trusted lists are kept"),
        ("demo", "yes: SK's demo Mobile-ID and Smart-ID services with their demo relying parties (also with tsl = test); default no"),
        ("mobile-id.url", "Mobile-ID service URL (default SK's production service, or its demo one)"),
        ("mobile-id.relying-party-uuid", "Mobile-ID relying-party UUID"),
        ("mobile-id.relying-party-name", "Mobile-ID relying-party name"),
        ("mobile-id.tls-cert", "PEM: pinned TLS certificate(s) of the Mobile-ID service (SK's hosts have built-in key pins)"),
        ("mobile-id.timeout", "seconds to wait for the Mobile-ID user to confirm (default 150)"),
        ("smart-id.url", "Smart-ID service URL (default SK's production service, or its demo one)"),
        ("smart-id.relying-party-uuid", "Smart-ID relying-party UUID"),
        ("smart-id.relying-party-name", "Smart-ID relying-party name"),
        ("smart-id.tls-cert", "PEM: pinned TLS certificate(s) of the Smart-ID service (SK's hosts have built-in key pins)"),
        ("smart-id.timeout", "seconds to wait for the Smart-ID user to confirm (default 180)"),
        ("smart-id.api", "Smart-ID RP API: v3 (default) or v2 (default when smart-id.url ends in /v2)"),
        ("smart-id.signature-algorithm", "Smart-ID v3 signatures: pss (RSASSA-PSS, default) or pkcs1 (for validators without PSS)"),
        ("smart-id.scheme-name", "Smart-ID v3 schemeName in device links (default smart-id-demo, smart-id on SK's production service)"),
        ("remote.url", "remote signing service: its CSC API URL, up to and including /csc/v1"),
        ("remote.tls-cert", "PEM: pinned TLS certificate(s) of the remote signing service (required)"),
        ("remote.client-identity", "PKCS#12 file presented as TLS client certificate to the remote service"),
        ("remote.client-identity-passphrase-file", "file holding that identity's passphrase (else it is asked)"),
        ("remote.username", "user name for the remote service's auth/login (HTTP Basic); without it the client certificate identifies you"),
        ("remote.password-file", "file holding that user's password (else it is asked)"),
        ("remote.timeout", "seconds one call to the remote service may take (default 120)"),
        ("pinentry", "pinentry program for PINs"),
        ("transient-names", "names of new files that live only in a mount, never saved (shell globs; default *~ .#* #*# .~lock.*# *.swp *.swx .goutputstream-* .nfs* .DS_Store Thumbs.db desktop.ini ._*; none)"),
        ("notify", "desktop notification of verification codes: yes (default) or no"),
        ("proxy", "HTTP(S) proxy for every outside service"),
    ]

    public static let knownKeys: Set<String> = Set(keys.map(\.key))

    /// Keys with a fixed set of values.
    static let allowedValues: [String: Set<String>] = ["profile": ["LT", "B"], "notify": ["yes", "no"], "demo": ["yes", "no"],
                                                       "smart-id.api": ["v2", "v3"], "smart-id.signature-algorithm": ["pss", "pkcs1"]]

    public private(set) var values: [String: String] = [:]

    public init() {}

    public subscript(key: String) -> String? { values[key] }

    /// Keys whose values are paths. A relative one is made absolute when it is read (against the
    /// config file's folder, or the working folder for `-o`): a mount's daemon runs in `/`.
    public static let pathKeys: Set<String> = [
        "tsl", "tsl-cert", "trust-anchors", "cache-dir", "mobile-id.tls-cert", "smart-id.tls-cert", "remote.tls-cert",
        "remote.client-identity", "remote.client-identity-passphrase-file", "remote.password-file",
    ]

    static func absolute(_ value: String, key: String, base: String?, home: String) -> String {
        guard pathKeys.contains(key), let base, !value.isEmpty, !value.hasPrefix("/"), !value.contains("://"),
              !(key == "tsl" && (value == "none" || value == "test")) else { return value }
        let expanded = value.hasPrefix("~/") ? (home + value.dropFirst(1)) : value
        if expanded.hasPrefix("/") { return expanded }
        return (base.hasSuffix("/") ? base : base + "/") + (expanded.hasPrefix("./") ? String(expanded.dropFirst(2)) : expanded)
    }

    /// Sets one key, checking that it exists and that its value is allowed. A path value is made
    /// absolute against `base`, and `~/` against `home`.
    public mutating func set(_ key: String, _ value: String, origin: String, relativeTo base: String? = nil,
                             home: String = Configuration.homeFolder()) throws {
        let value = Self.absolute(value, key: key, base: base, home: home)
        guard Self.knownKeys.contains(key) else {
            let suggestion = Suggestion.closest(to: key, among: Self.knownKeys).map { "; did you mean '\($0)'?" } ?? ""
            throw ConfigurationError("\(origin): unknown configuration key '\(key)'\(suggestion)")
        }
        if key.hasSuffix(".timeout"), Int(value).map({ $0 <= 0 || $0 > 3600 }) ?? true {
            throw ConfigurationError("\(origin): '\(key)' must be a number of seconds from 1 to 3600, not '\(value)'")
        }
        if key == "ocsp-tm-policy", Self.objectIdentifiers(value) == nil {
            throw ConfigurationError("\(origin): 'ocsp-tm-policy' must be OIDs separated by commas (such as 1.3.6.1.4.1.10015.4.1.2), not '\(value)'")
        }
        if let allowed = Self.allowedValues[key], !allowed.contains(value) {
            throw ConfigurationError("\(origin): '\(key)' must be one of \(allowed.sorted().joined(separator: ", ")), not '\(value)'")
        }
        values[key] = value
    }

    /// A list of dotted OIDs separated by commas or spaces (`ocsp-tm-policy`); nil when one is not an OID.
    public static func objectIdentifiers(_ value: String) -> [String]? {
        let items = value.split(whereSeparator: { $0 == "," || $0.isWhitespace }).map(String.init)
        let isOID: (String) -> Bool = { item in
            let arcs = item.split(separator: ".", omittingEmptySubsequences: false)
            return arcs.count >= 2 && arcs.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
        }
        return !items.isEmpty && items.allSatisfy(isOID) ? items : nil
    }

    /// Settings naming a file that is not there, one message each: a mount checks them before
    /// mounting (its daemon would find out only at the first validation or signing). Not the
    /// cache folder (made when needed), nor trust-anchors and tsl-cert (read, and refused with
    /// their own message, when the mount sets up its trust).
    public func missingFiles() -> [String] {
        Self.pathKeys.subtracting(["cache-dir", "trust-anchors", "tsl-cert"]).sorted().compactMap { key in
            guard let value = values[key], !value.isEmpty, !value.contains("://"),
                  !(key == "tsl" && (value == "none" || value == "test")),
                  !FileManager.default.fileExists(atPath: value) else { return nil }
            var message = "setting \(key): \(value) does not exist"
            if key == "tsl" {
                let word = String(value.split(separator: "/").last ?? "")
                message += " (tsl takes a file, an http(s) URL, test or none)"
                if let closest = Suggestion.closest(to: word, among: ["test", "none"]) { message += "; did you mean '\(closest)'?" }
            }
            return message
        }
    }

    /// Parses config-file text: one `key = value` a line; a line starting with `#` is a comment
    /// (a `#` inside a value, as in a URL, is kept); blank lines and CR LF line ends are fine.
    public mutating func load(text: String, origin: String, relativeTo base: String? = nil,
                              home: String = Configuration.homeFolder()) throws {
        // "\r\n" is one Character in Swift, so split on both kinds of line end.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (number, rawLine) in lines.enumerated() {
            let trimmed = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw ConfigurationError("\(origin):\(number + 1): expected 'key = value'")
            }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
            let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            try set(key, value, origin: "\(origin):\(number + 1)", relativeTo: base, home: home)
        }
    }

    /// The default config file: `$XDG_CONFIG_HOME/asicfs/config`, else `~/.config/asicfs/config`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty { return xdg + "/asicfs/config" }
        return homeFolder(environment: environment) + "/.config/asicfs/config"
    }

    /// The home folder as a shell finds it: $HOME when set, else the password database's entry
    /// (NSHomeDirectory() on Linux reads only the latter, so a changed HOME would be ignored).
    public static func homeFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let folder = entry.pointee.pw_dir { return String(cString: folder) }
        return "/"
    }

    /// The system-wide config file, read before the user's: `/etc/asicfs/config`, or the file
    /// `ASICFS_SYSTEM_CONFIG` names (as GIT_CONFIG_SYSTEM does for git).
    public static func systemPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = environment["ASICFS_SYSTEM_CONFIG"], !path.isEmpty { return path }
        return "/etc/asicfs/config"
    }

    /// Loads the config: the system-wide file, then the user's (both may be absent), then
    /// `overrides` (`key=value` strings from `-o`), each winning over the one before. An explicit
    /// `--config` file is read instead of both files and must exist.
    public static func load(explicitPath: String?, overrides: [String],
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Configuration {
        var configuration = Configuration()
        let home = homeFolder(environment: environment)
        if let explicitPath {
            try configuration.loadFile(explicitPath, required: true, home: home)
        } else {
            try configuration.loadFile(systemPath(environment: environment), required: false, home: home)
            try configuration.loadFile(defaultPath(environment: environment), required: false, home: home)
        }
        for override in overrides {
            guard let equals = override.firstIndex(of: "=") else {
                throw ConfigurationError("-o \(override): expected key=value")
            }
            try configuration.set(String(override[..<equals]), String(override[override.index(after: equals)...]),
                                  origin: "-o", relativeTo: FileManager.default.currentDirectoryPath, home: home)
        }
        return configuration
    }

    /// Reads one config file over what is set; relative paths inside it are relative to its folder.
    private mutating func loadFile(_ path: String, required: Bool, home: String) throws {
        if let data = FileManager.default.contents(atPath: path) {
            guard let text = String(data: data, encoding: .utf8) else {
                throw ConfigurationError("\(path): not UTF-8 text")
            }
            let absolutePath = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            try load(text: text, origin: path, relativeTo: String(absolutePath[..<absolutePath.lastIndex(of: "/")!]), home: home)
        } else if required && access(path, R_OK) != 0 {
            // (A readable file with no contents, such as --config /dev/null, is an empty config.)
            throw ConfigurationError("cannot read config file \(path)")
        } else if !required && access(path, F_OK) == 0 && access(path, R_OK) != 0 {
            // A file that is there but cannot be read is a mistake to point out, not to skip.
            throw ConfigurationError("cannot read config file \(path)")
        }
    }
}

/// A configuration problem, as one sentence.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The asicfs version (shown by `--version`, and later in the user agent of network clients).
public let asicfsVersion = "0.1.0"

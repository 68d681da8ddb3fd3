import ASiC
import Configuration
import Crypto
import Foundation
import HTTP
import Trust
import Validation

/// LT (time-stamp + OCSP, the default) or B (signature only: no outside service, not long-term).
public enum SignatureProfile: String, Sendable { case lt = "LT", b = "B" }

/// Everything signing and validation need from the configuration: services, profile and trust.
/// The trust store is loaded on first use and kept (trusted lists are large).
public final class SignatureEnvironment: @unchecked Sendable {
    public static let defaultTSA = "https://eid-dd.ria.ee/ts"

    /// Every setting, for the signers' own keys (service URLs, relying party, pinned certificates).
    public let configuration: Configuration
    public let profile: SignatureProfile
    public let tsaURL: String
    public let ocspURL: String?
    public let proxy: String?
    /// Policies that make an OCSP answer a time-mark: `ocsp-tm-policy` (else the BDOC one), and
    /// with `tsl = test` SK's test policy too, as libdigidocpp's test configuration has it.
    public let timeMarkPolicies: [String]
    /// What the configuration says about trust, its files already read.
    private let configuredTrust: ConfiguredTrust
    private let lock = NSLock()
    private var loadedTrust: Result<TrustStore, TrustedListError>?

    public init(configuration: Configuration, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.configuration = configuration
        profile = SignatureProfile(rawValue: configuration["profile"] ?? "LT") ?? .lt
        tsaURL = configuration["tsa-url"] ?? Self.defaultTSA
        ocspURL = configuration["ocsp-url"]
        proxy = configuration["proxy"]
        var policies = configuration["ocsp-tm-policy"].flatMap(Configuration.objectIdentifiers) ?? [Validator.timeMarkResponderPolicy]
        if configuration["tsl"] == "test" && !policies.contains(Validator.testTimeMarkResponderPolicy) {
            policies.append(Validator.testTimeMarkResponderPolicy)
        }
        timeMarkPolicies = policies
        configuredTrust = try ConfiguredTrust(configuration, environment: environment)
    }

    /// `tsl`, `tsl-cert`, `tsl-signer-sha256`, `trust-anchors` and `cache-dir`, read from the
    /// configuration. Without `tsl` the EU list of trusted lists is used, `tsl = test` is the
    /// Estonian test LOTL, and `tsl = none` turns trusted lists off (trust anchors only). The two
    /// named lists are checked against their built-in signers' fingerprints (`BuiltInTrust`)
    /// unless `tsl-cert` names certificates instead; `tsl-signer-sha256` adds fingerprints to
    /// either. Files the configuration names are read at once (a bad one fails the mount or command).
    private struct ConfiguredTrust {
        let tsl: String
        let cacheDir: String
        let tslCerts: [Certificate]?
        let addedSigners: [CertificateFingerprint]
        let anchors: [Certificate]

        init(_ configuration: Configuration, environment: [String: String]) throws {
            cacheDir = configuration["cache-dir"]
                ?? ((environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.cache")) + "/asicfs")
            var tsl = configuration["tsl"] ?? SignatureEnvironment.euListOfTrustedLists
            if tsl == "none" { tsl = "" }
            if tsl == "test" { tsl = SignatureEnvironment.testListOfTrustedLists }
            self.tsl = tsl
            addedSigners = try Self.fingerprints(configuration["tsl-signer-sha256"] ?? "")
            do {
                tslCerts = try configuration["tsl-cert"].map { file throws(TrustedListError) in try TrustAnchorFiles.certificates(inFile: file) }
                anchors = try configuration["trust-anchors"].map { path throws(TrustedListError) in try TrustAnchorFiles.load(path) } ?? []
            } catch {
                throw SigningError("\(error)")
            }
        }

        /// `tsl-signer-sha256`: fingerprints separated by commas or spaces, colons allowed inside.
        static func fingerprints(_ value: String) throws -> [CertificateFingerprint] {
            try value.split(whereSeparator: { $0 == "," || $0.isWhitespace }).map { item in
                guard let fingerprint = CertificateFingerprint(hex: String(item)) else {
                    throw SigningError("tsl-signer-sha256: '\(PrintableText.escaped(String(item)))' is not a SHA-256 fingerprint (64 hexadecimal digits, colons allowed)")
                }
                return fingerprint
            }
        }

        /// The settings: `tsl-cert`'s certificates, else the named list's built-in fingerprints,
        /// with `tsl-signer-sha256` added.
        func settings() -> TrustSettings {
            let builtIn = tslCerts != nil ? []
                : tsl == SignatureEnvironment.euListOfTrustedLists ? BuiltInTrust.euListOfTrustedListsSigners
                : tsl == SignatureEnvironment.testListOfTrustedLists ? BuiltInTrust.testListOfTrustedListsSigners : []
            return TrustSettings(tsl: tsl.isEmpty ? nil : tsl, tslCerts: tslCerts ?? [], tslSignerFingerprints: builtIn + addedSigners,
                                 trustAnchors: anchors, cacheDir: cacheDir)
        }
    }

    /// The trust settings (what `trust()` loads the store from, once).
    var trustSettings: TrustSettings {
        configuredTrust.settings()
    }

    public static let euListOfTrustedLists = "https://ec.europa.eu/tools/lotl/eu-lotl.xml"
    /// `tsl = test`: the Estonian test LOTL, which points to EE_T.xml (SK's test and demo services).
    public static let testListOfTrustedLists = "https://open-eid.github.io/test-TL/tl-mp-test-EE.xml"

    public func httpClient(cancellation: Cancellation? = nil) throws -> HTTPClient {
        do {
            return try HTTPClient(HTTPClient.Options(version: asicfsVersion, proxy: proxy.map { .url($0) } ?? .environment,
                                                     cancellation: cancellation))
        } catch {
            throw SigningError("\(error)")
        }
    }

    /// The trust store, loaded once; a failure is remembered and reported by every validation.
    public func trust() -> Result<TrustStore, TrustedListError> {
        lock.withLock {
            if let loadedTrust { return loadedTrust }
            let result = Result { () throws(TrustedListError) -> TrustStore in
                var settings = configuredTrust.settings()
                if let client = try? httpClient() {
                    // On stderr: a command's progress; a detached daemon's goes nowhere.
                    settings.download = TrustSettings.httpDownload(client) { text in
                        FileHandle.standardError.write(Data("asicfs: \(text)\n".utf8))
                    }
                }
                return try TrustStore.load(settings)
            }
            loadedTrust = result
            return result
        }
    }

    /// Certificates asicfs knows from trust anchors and trusted lists (to find a signer's issuer).
    public func knownCertificates() -> [Certificate] {
        (try? trust().get().knownCertificates) ?? []
    }

    public func validator() -> Validator {
        switch trust() {
        case .success(let store): Validator(trust: store, timeMarkPolicies: timeMarkPolicies)
        case .failure(let error): Validator(trust: nil, trustProblem: error.description, timeMarkPolicies: timeMarkPolicies)
        }
    }
}

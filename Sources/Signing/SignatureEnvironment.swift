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
    let trustSettings: TrustSettings
    private let lock = NSLock()
    private var loadedTrust: Result<TrustStore, TrustedListError>?

    public init(configuration: Configuration, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.configuration = configuration
        profile = SignatureProfile(rawValue: configuration["profile"] ?? "LT") ?? .lt
        tsaURL = configuration["tsa-url"] ?? Self.defaultTSA
        ocspURL = configuration["ocsp-url"]
        proxy = configuration["proxy"]
        trustSettings = try Self.trustSettings(configuration, environment: environment)
    }

    /// `tsl`, `tsl-cert`, `trust-anchors` and `cache-dir`. Without `tsl` the EU list of trusted
    /// lists is used, `tsl = test` is the Estonian test LOTL, and `tsl = none` turns trusted
    /// lists off (trust anchors only). The two named lists are checked against their built-in
    /// signers (`BuiltInTrust`) unless `tsl-cert` says otherwise.
    static func trustSettings(_ configuration: Configuration, environment: [String: String]) throws -> TrustSettings {
        let cacheDir = configuration["cache-dir"]
            ?? ((environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.cache")) + "/asicfs")
        var tsl = configuration["tsl"] ?? euListOfTrustedLists
        if tsl == "none" { tsl = "" }
        if tsl == "test" { tsl = testListOfTrustedLists }
        var tslCerts: [Certificate] = []
        do {
            if let file = configuration["tsl-cert"] {
                tslCerts = try TrustAnchorFiles.certificates(inFile: file)
            } else {
                let builtIn = tsl == euListOfTrustedLists ? BuiltInTrust.euListOfTrustedListsSigners
                    : tsl == testListOfTrustedLists ? BuiltInTrust.testListOfTrustedListsSigners : []
                tslCerts = try builtIn.map { pem in
                    do { return try Certificate.parse(Array(pem.utf8)) } catch { throw TrustedListError("a built-in LOTL signer cannot be read: \(error)") }
                }
            }
            let anchors = try configuration["trust-anchors"].map { path throws(TrustedListError) in try TrustAnchorFiles.load(path) } ?? []
            return TrustSettings(tsl: tsl.isEmpty ? nil : tsl, tslCerts: tslCerts, trustAnchors: anchors, cacheDir: cacheDir)
        } catch {
            throw SigningError("\(error)")
        }
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
            var settings = trustSettings
            if let client = try? httpClient() { settings.download = TrustSettings.httpDownload(client) }
            let result = Result { () throws(TrustedListError) -> TrustStore in try TrustStore.load(settings) }
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
        case .success(let store): Validator(trust: store)
        case .failure(let error): Validator(trust: nil, trustProblem: error.description)
        }
    }
}

import Crypto
import Foundation

/// Fetches a trusted list by URL. The loader takes it as a closure so that tests and offline
/// use need no network; `TrustSettings.httpDownload(client)` is the libcurl one.
public typealias TrustedListDownload = @Sendable (_ url: String) throws -> [UInt8]

/// What to trust: a trusted list (a LOTL or a single national list, by path or URL) with the
/// certificates (or their fingerprints) allowed to sign it, plus plain trust anchors (test PKIs) trusted for everything.
public struct TrustSettings: Sendable {
    /// Path or URL of a list of lists or of a single trusted list; nil: trust anchors only.
    public var tsl: String?
    /// The certificates allowed to sign `tsl` (configuration key `tsl-cert`).
    public var tslCerts: [Certificate]
    /// Fingerprints of further certificates allowed to sign `tsl` (the built-in LOTL signers,
    /// key `tsl-signer-sha256`): the list brings the certificate in its KeyInfo.
    public var tslSignerFingerprints: [CertificateFingerprint]
    /// Certificates trusted as CA, TSA and OCSP responder at any time (key `trust-anchors`).
    public var trustAnchors: [Certificate]
    /// Where downloaded lists are kept, and where pointed lists are looked for.
    public var cacheDir: String
    /// How lists given by URL are fetched; nil: only local files and the cache are used.
    public var download: TrustedListDownload?
    /// "Now", for the NextUpdate check (fixed in tests).
    public var now: Date

    public init(tsl: String?, tslCerts: [Certificate], tslSignerFingerprints: [CertificateFingerprint] = [],
                trustAnchors: [Certificate] = [], cacheDir: String, download: TrustedListDownload? = nil, now: Date = Date()) {
        self.tsl = tsl
        self.tslCerts = tslCerts
        self.tslSignerFingerprints = tslSignerFingerprints
        self.trustAnchors = trustAnchors
        self.cacheDir = cacheDir
        self.download = download
        self.now = now
    }
}

/// A TLS public-key pin as a fact: the base64 SHA-256 of a certificate's DER
/// SubjectPublicKeyInfo (the form HPKP and SK's pinning pages use), what it is and until when
/// the certificate it was seen in is valid.
public struct SPKIPin: Sendable, Equatable {
    public let sha256Base64: String
    public let name: String
    /// "YYYY-MM-DD": the notAfter of the certificate carrying the key (for `--version --verbose`).
    public let notAfter: String
    /// Nil: a CA pin for every SK host; else the hosts whose own (leaf) key it is.
    public let hosts: Set<String>?
}

extension BuiltInTrust {
    /// SK's Mobile-ID and Smart-ID hosts are accepted when their chain, verified by the system CA
    /// store with the host name checked, holds one of these keys. Pinning DigiCert's issuing CA
    /// and root, not the leaves, survives SK's yearly certificate renewal; the demo hosts keep
    /// their leaf key across renewals, so it is pinned too (a way in should SK leave DigiCert).
    /// Sources, read 2026-12-03: the issuing CA from SK-EID/smart-id-java-client
    /// demo_server_trusted_ssl_certs.jks at bc6157305aea; the root from the DigiDoc4 central
    /// configuration SERIAL 200 (open-eid/qt-common 05036e24b0db), equal to Debian's
    /// ca-certificates DigiCert_Global_Root_G2; the tsp.demo.sk.ee leaf from open-eid/SiGa
    /// mid.truststore.p12 at b821759a3380 (= SK-EID/mid-rest-php-client's demo pin); the
    /// sid.demo.sk.ee leaf from SiGa sid.truststore.p12 (= SK-EID/smart-id-php-client's demo pin).
    public static let skServiceTLSPins: [SPKIPin] = [
        SPKIPin(sha256Base64: "Wec45nQiFwKvHtuHxSAMGkt19k+uPSw9JlEkxhvYPHk=",
                name: "DigiCert Global G2 TLS RSA SHA256 2020 CA1", notAfter: "2031-03-29", hosts: nil),
        SPKIPin(sha256Base64: "i7WTqTvh0OioIruIfFR4kMPnBqrS2rdiVPl/s2uC/CY=",
                name: "DigiCert Global Root G2", notAfter: "2038-01-15", hosts: nil),
        SPKIPin(sha256Base64: "Fnjp3/Yi4oPFBG+GtDV2ZVJEPcVVJA5r/T7QK+VXPpM=",
                name: "tsp.demo.sk.ee (leaf key)", notAfter: "2027-02-06", hosts: ["tsp.demo.sk.ee"]),
        SPKIPin(sha256Base64: "Ps1Im3KeB0Q4AlR+/J9KFd/MOznaARdwo4gURPCLaVA=",
                name: "sid.demo.sk.ee (leaf key)", notAfter: "2026-10-10", hosts: ["sid.demo.sk.ee"]),
    ]

    /// The pins for one of SK's hosts: the CA pins and the host's own leaf key, if any.
    public static func skServiceTLSPins(for host: String) -> [String] {
        skServiceTLSPins.filter { $0.hosts?.contains(host) ?? true }.map(\.sha256Base64)
    }
}

/// Who may sign the lists of trusted lists asicfs knows by name, as facts: the SHA-256
/// fingerprint of each signer's certificate, its subject and when it ends. A downloaded list
/// carries its signer's certificate in its ds:KeyInfo; it is accepted when that certificate has
/// one of these fingerprints and the signature verifies with it (ListSignature). `tsl-cert`
/// replaces these, `tsl-signer-sha256` adds to them (a signer the EU published after a release).
/// `.ci/builtin-trust.sh` checks them against the certificates they were taken from.
public enum BuiltInTrust {
    /// The EU LOTL (https://ec.europa.eu/tools/lotl/eu-lotl.xml): the six signers of the Official
    /// Journal notice C/2026/1944 (2026-04-15). Source: open-eid/libdigidocpp etc/tl-mp1..6.crt
    /// at commit bc64a76d46a5 (its TSL_CERTS), the same six as open-eid/SiVa's
    /// lotl-truststore.p12 at 7413bc71adb5; read 2026-12-03.
    public static let euListOfTrustedListsSigners: [CertificateFingerprint] = [
        fact("D2:06:4F:DD:70:F6:98:2D:CC:51:6B:86:D9:D5:C5:6A:EA:93:94:17:C6:24:B2:E4:78:C0:B2:9D:E5:4F:84:74",
             "Patrick Kremer (Signature)", "2028-05-30"),
        fact("E0:A6:20:FB:B6:74:73:62:BB:93:3A:C4:41:69:D6:76:A5:53:44:47:16:CF:5F:31:60:5F:12:A2:2B:83:96:B1",
             "EUROPEAN COMMISSION (DIGIT, digit-dmo)", "2027-11-17"),
        fact("C0:64:1C:4F:7D:56:C4:31:B1:C9:24:74:2D:B7:FC:E9:C1:EE:F7:D7:FD:21:21:13:A2:76:84:86:B3:AB:CD:C5",
             "IOANNA KALOGEROPOULOU", "2029-11-23"),
        fact("DF:7E:29:36:0C:34:B2:B8:D6:D5:F4:03:25:C1:D4:D1:2C:99:22:CE:CD:33:B7:40:76:74:A7:4B:2B:3C:A1:E5",
             "VICENTE ANDREU NAVARRO", "2027-05-06"),
        fact("B6:3D:41:67:44:E7:09:8B:F9:EC:2C:AA:59:6A:93:BC:24:68:E3:7F:82:84:BA:65:EC:C0:61:71:1B:CB:AA:18",
             "APOSTOLOS APLADAS", "2027-04-26"),
        fact("23:61:03:F0:3A:80:31:AE:8F:47:F9:05:9B:F8:DE:38:56:4C:DB:FE:BE:DD:E4:A5:97:D5:0F:89:80:AA:65:3B",
             "EUROPEAN COMMISSION (EU-TRUST)", "2029-12-17"),
    ]

    /// The Estonian test LOTL (`tsl = test`, https://open-eid.github.io/test-TL/tl-mp-test-EE.xml),
    /// self-signed "Test TSL". Source: open-eid/test-TL trusted-test-tsl.crt at c869e35a28aa (the
    /// same certificate is digidoc4j's and SiVa's test-lotl-truststore.p12); read 2026-12-03.
    public static let testListOfTrustedListsSigners: [CertificateFingerprint] = [
        fact("9E:4E:83:97:3E:AB:8E:C3:A9:F5:36:8D:5C:98:34:44:D8:FF:9B:9D:E8:0B:B4:46:CD:D0:C7:71:9E:E3:AD:FA",
             "Test TSL", "2028-11-12"),
    ]

    /// A fact written in this file; a typo in one fails every test that loads trust.
    private static func fact(_ hex: String, _ name: String, _ notAfter: String) -> CertificateFingerprint {
        guard let fingerprint = CertificateFingerprint(hex: hex, name: name, notAfter: notAfter) else {
            preconditionFailure("BuiltInTrust: '\(hex)' is not a SHA-256 fingerprint")
        }
        return fingerprint
    }
}

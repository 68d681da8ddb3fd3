import Foundation

extension TestPKI {
    /// Runs contrib/testpki/mkpki_dated.py: a PKI in mkpki.sh's layout (so `TestServices.start(pki:)`
    /// serves it) whose CAs, OCSP responder and TSA are valid from `caNotBefore` and whose signer
    /// was issued at `signerNotBefore`, for trust-list scenarios set in the past. Its OCSP
    /// responder and TSA are issued by the root, its list signers are `lotl-signer.pem` and
    /// `tl-signer.pem` (keys beside them).
    public static func makeDated(in folder: String, caNotBefore: Date, signerNotBefore: Date,
                                 ocspURL: String = "http://127.0.0.1:9/ocsp") throws -> TestPKI {
        let made = try Shell.run("/usr/bin/python3", [TestServices.contrib + "/mkpki_dated.py", folder,
                                                      TestTime.string(caNotBefore), TestTime.string(signerNotBefore), ocspURL])
        guard made.status == 0 else { throw ShellError("mkpki_dated.py failed (\(made.status)): \(made.stderr)") }
        return TestPKI(folder: folder, ocspURL: ocspURL)
    }

    public var lotlSigner: String { path("lotl-signer.pem") }
    public var tlSigner: String { path("tl-signer.pem") }
}

/// ISO 8601 UTC times to the second, as trusted lists and the generators write them.
public enum TestTime {
    public static func string(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    public static func date(_ text: String) -> Date? { ISO8601DateFormatter().date(from: text) }

    /// `date` without its fraction of a second (certificates and lists keep whole seconds).
    public static func whole(_ date: Date) -> Date { Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)) }
}

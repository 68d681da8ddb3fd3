import Foundation

/// A test list of trusted lists and the trusted list it points to, made from nothing for a test
/// PKI by contrib/testpki/mklists.py (signed with xmlsec1 by the PKI's lotl-signer and tl-signer).
public struct TestTrustLists {
    public let folder: String
    public let pki: TestPKI
    /// The list of lists (`tsl` setting).
    public var lotl: String { folder + "/tl-mp-test-EE.xml" }
    /// The trusted list it points to.
    public var tl: String { folder + "/EE_T.xml" }
    /// The certificate that signs the list of lists (`tsl-cert` setting).
    public var lotlSigner: String { pki.path("lotl-signer.pem") }

    /// Writes the lists into `folder`. `tlURL` is where the list of lists says the trusted list
    /// is; `caQualifier` replaces the CA's QCWithQSCD (e.g. "QCNoQSCD").
    public static func make(for pki: TestPKI, in folder: String, tlURL: String? = nil, caQualifier: String? = nil) throws -> TestTrustLists {
        var arguments = [TestServices.contrib + "/mklists.py", pki.folder, folder]
        if let tlURL { arguments += ["--tl-url", tlURL] }
        if let caQualifier { arguments += ["--ca-qualifier", caQualifier] }
        let made = try Shell.run("/usr/bin/python3", arguments)
        guard made.status == 0 else { throw ShellError("mklists.py failed: \(made.stderr)") }
        return TestTrustLists(folder: folder, pki: pki)
    }

    /// asicfs settings that trust through these lists alone, caching in `cache`.
    public func settings(cache: String) -> [String] {
        ["-o", "tsl=\(lotl)", "-o", "tsl-cert=\(lotlSigner)", "-o", "cache-dir=\(cache)"]
    }
}

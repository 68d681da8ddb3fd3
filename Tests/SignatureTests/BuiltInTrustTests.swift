import Configuration
import Crypto
import Foundation
@testable import Signing
import TestTools
import Trust
import XCTest

/// Trust out of the box: the EU LOTL (the default) and the Estonian test LOTL (`tsl = test`) are
/// accepted when the certificate in their own KeyInfo has a built-in fingerprint and their
/// signature verifies with it; `tsl-signer-sha256` adds a fingerprint, `tsl-cert` replaces them.
/// The lists here are made and signed (xmlsec1) by the test with its own keys.
final class BuiltInTrustTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "asicfs-builtin-trust-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder + "/cache", withIntermediateDirectories: true)
        let made = try Shell.sh("""
            set -e; cd '\(folder)'
            cert() { openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -subj "/CN=$2" -days 2 -out "$1.pem" 2>/dev/null; }
            cert signer 'asicfs test list signer'; cert other 'asicfs other list signer'; cert listed 'asicfs test listed CA'
            """)
        XCTAssertEqual(made.status, 0, made.stderr)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    private func environment(_ settings: [String]) throws -> SignatureEnvironment {
        try SignatureEnvironment(configuration: try Configuration.load(explicitPath: "/dev/null", overrides: settings),
                                 environment: ["HOME": folder])
    }

    private func fingerprint(_ name: String) throws -> String {
        let certificate = try TrustAnchorFiles.certificates(inFile: "\(folder)/\(name).pem")[0]
        return Digest.hash(certificate.der, .sha256).hexString
    }

    /// A trusted list listing one CA ("asicfs test listed CA"), signed enveloped by `signer` with
    /// its certificate in KeyInfo, written as `name` (in the cache folder unless a path is given).
    @discardableResult
    private func signedList(by signer: String, as name: String = "cache/tl-mp-test-EE.xml") throws -> String {
        let listed = try TrustAnchorFiles.certificates(inFile: folder + "/listed.pem")[0]
        let template = """
            <?xml version="1.0" encoding="UTF-8"?>
            <tsl:TrustServiceStatusList xmlns:tsl="http://uri.etsi.org/02231/v2#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Id="TSL">
            <tsl:SchemeInformation>
            <tsl:TSLSequenceNumber>1</tsl:TSLSequenceNumber>
            <tsl:TSLType>http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric</tsl:TSLType>
            <tsl:SchemeOperatorName><tsl:Name xml:lang="en">asicfs test operator</tsl:Name></tsl:SchemeOperatorName>
            <tsl:SchemeTerritory>EE</tsl:SchemeTerritory>
            <tsl:ListIssueDateTime>2026-01-01T00:00:00Z</tsl:ListIssueDateTime>
            <tsl:NextUpdate><tsl:dateTime>2099-01-01T00:00:00Z</tsl:dateTime></tsl:NextUpdate>
            </tsl:SchemeInformation>
            <tsl:TrustServiceProviderList><tsl:TrustServiceProvider>
            <tsl:TSPInformation><tsl:TSPName><tsl:Name xml:lang="en">asicfs test provider</tsl:Name></tsl:TSPName></tsl:TSPInformation>
            <tsl:TSPServices><tsl:TSPService><tsl:ServiceInformation>
            <tsl:ServiceTypeIdentifier>http://uri.etsi.org/TrstSvc/Svctype/CA/QC</tsl:ServiceTypeIdentifier>
            <tsl:ServiceName><tsl:Name xml:lang="en">asicfs test listed CA</tsl:Name></tsl:ServiceName>
            <tsl:ServiceDigitalIdentity><tsl:DigitalId><tsl:X509Certificate>\(Data(listed.der).base64EncodedString())</tsl:X509Certificate></tsl:DigitalId></tsl:ServiceDigitalIdentity>
            <tsl:ServiceStatus>http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted</tsl:ServiceStatus>
            <tsl:StatusStartingTime>2020-01-01T00:00:00Z</tsl:StatusStartingTime>
            </tsl:ServiceInformation></tsl:TSPService></tsl:TSPServices>
            </tsl:TrustServiceProvider></tsl:TrustServiceProviderList>
            <ds:Signature Id="signature"><ds:SignedInfo>
            <ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>
            <ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>
            <ds:Reference URI=""><ds:Transforms>
            <ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>
            <ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>
            </ds:Transforms><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue></ds:DigestValue></ds:Reference>
            </ds:SignedInfo><ds:SignatureValue></ds:SignatureValue>
            <ds:KeyInfo><ds:X509Data><ds:X509Certificate></ds:X509Certificate></ds:X509Data></ds:KeyInfo>
            </ds:Signature>
            </tsl:TrustServiceStatusList>
            """
        try template.write(toFile: folder + "/template.xml", atomically: true, encoding: .utf8)
        let path = name.hasPrefix("/") ? name : folder + "/" + name
        let signed = try Shell.run("/usr/bin/xmlsec1", ["--sign", "--privkey-pem", "\(folder)/\(signer).key,\(folder)/\(signer).pem",
                                                        "--output", path, folder + "/template.xml"])
        XCTAssertEqual(signed.status, 0, signed.stderr)
        // The independent check: xmlsec1 accepts what the test made.
        let checked = try Shell.run("/usr/bin/xmlsec1", ["--verify", "--trusted-pem", "\(folder)/\(signer).pem", path])
        XCTAssertEqual(checked.status, 0, checked.stderr)
        return path
    }

    /// Loads trust as a validation would, without downloading (a refused cached list then fails).
    private func load(_ settings: [String]) throws -> Result<TrustStore, TrustedListError> {
        let trust = try environment(settings).trustSettings
        return Result { () throws(TrustedListError) in try TrustStore.load(trust) }
    }

    private func refusal(_ settings: [String]) throws -> String {
        switch try load(settings) {
        case .success: XCTFail("the list was accepted with \(settings)"); return ""
        case .failure(let error): return error.description
        }
    }

    // MARK: - which signers each setting allows

    func testTheNamedListsAllowTheirBuiltInFingerprints() throws {
        let eu = try environment([]).trustSettings
        XCTAssertEqual(eu.tsl, "https://ec.europa.eu/tools/lotl/eu-lotl.xml")
        XCTAssertEqual(eu.tslCerts.count, 0)
        XCTAssertEqual(eu.tslSignerFingerprints.map { String($0.hex.prefix(11)) },
                       ["D2:06:4F:DD", "E0:A6:20:FB", "C0:64:1C:4F", "DF:7E:29:36", "B6:3D:41:67", "23:61:03:F0"])
        let test = try environment(["tsl=test"]).trustSettings
        XCTAssertEqual(test.tsl, "https://open-eid.github.io/test-TL/tl-mp-test-EE.xml")
        XCTAssertEqual(test.tslSignerFingerprints.map(\.hex),
                       ["9E:4E:83:97:3E:AB:8E:C3:A9:F5:36:8D:5C:98:34:44:D8:FF:9B:9D:E8:0B:B4:46:CD:D0:C7:71:9E:E3:AD:FA"])
        XCTAssertNil(try environment(["tsl=none"]).trustSettings.tsl)
    }

    func testTslSignerSha256AddsAndTslCertReplaces() throws {
        let added = try environment(["tsl=test", "tsl-signer-sha256=\(try fingerprint("signer")), \(try fingerprint("other"))"]).trustSettings
        XCTAssertEqual(added.tslSignerFingerprints.count, 3)
        let replaced = try environment(["tsl=test", "tsl-cert=\(folder)/signer.pem"]).trustSettings
        XCTAssertEqual(replaced.tslCerts.map(\.commonName), ["asicfs test list signer"])
        XCTAssertEqual(replaced.tslSignerFingerprints, [])
        // Colons, as openssl prints a fingerprint, are fine; anything else is named.
        let colons = try Shell.sh("openssl x509 -in '\(folder)/signer.pem' -noout -fingerprint -sha256 | cut -d= -f2").stdout
        XCTAssertEqual(try environment(["tsl-signer-sha256=\(colons.trimmingCharacters(in: .whitespacesAndNewlines))"])
            .trustSettings.tslSignerFingerprints.last?.sha256, Array(try Data(hexString: fingerprint("signer"))))
        XCTAssertThrowsError(try environment(["tsl-signer-sha256=ABCD"])) {
            XCTAssertEqual("\($0)", "tsl-signer-sha256: 'ABCD' is not a SHA-256 fingerprint (64 hexadecimal digits, colons allowed)")
        }
    }

    // MARK: - a list the test signs itself

    /// `tsl = test` with the list in the cache: its KeyInfo certificate's fingerprint is
    /// configured and the signature verifies, so the list is used and its CA is trusted.
    func testAListSignedByAConfiguredFingerprintIsAccepted() throws {
        try signedList(by: "signer")
        let store = try load(["tsl=test", "cache-dir=\(folder)/cache", "tsl-signer-sha256=\(try fingerprint("signer"))"]).get()
        XCTAssertEqual(store.lists.map(\.signer?.commonName), ["asicfs test list signer"])
        XCTAssertEqual(store.certificates.compactMap(\.commonName), ["asicfs test listed CA"])
        // Also a list by path, with only the fingerprint to say who may sign it.
        let path = try signedList(by: "signer", as: "own-list.xml")
        XCTAssertEqual(try load(["tsl=\(path)", "tsl-signer-sha256=\(try fingerprint("signer"))"]).get().certificates.count, 1)
    }

    /// The same list under the built-in fingerprint alone (the real "Test TSL"): refused, in one
    /// line that names the signer and its fingerprint.
    func testAListSignedByAnUnknownCertificateIsRefused() throws {
        try signedList(by: "signer")
        let message = try refusal(["tsl=test", "cache-dir=\(folder)/cache"])
        XCTAssertFalse(message.contains("\n"), message)
        XCTAssertTrue(message.hasPrefix("trusted list \(folder)/cache/tl-mp-test-EE.xml is refused: it is signed by asicfs test list signer (SHA-256 "),
                      message)
        XCTAssertTrue(message.contains("which is not an allowed signer (allowed: Test TSL (SHA-256 9E:4E:83:97"), message)
        // Another configured fingerprint does not help either.
        XCTAssertTrue(try refusal(["tsl=test", "cache-dir=\(folder)/cache", "tsl-signer-sha256=\(try fingerprint("other"))"])
            .contains("which is not an allowed signer"))
    }

    /// A known certificate in KeyInfo is not enough: the signature must verify with it.
    func testATamperedListIsRefusedThoughItsSignerIsKnown() throws {
        let path = try signedList(by: "signer")
        let allowed = ["tsl=test", "cache-dir=\(folder)/cache", "tsl-signer-sha256=\(try fingerprint("signer"))"]
        let original = try String(contentsOfFile: path, encoding: .utf8)
        // A changed service: the list's digest no longer matches.
        try original.replacingOccurrences(of: "Svcstatus/granted", with: "Svcstatus/withdrawn")
            .write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertTrue(try refusal(allowed).hasSuffix("its signature does not match its content: the list was changed after signing"))
        // Digests intact, the signature value made by another key: the value check fails.
        try signedList(by: "other")
        let forged = try String(contentsOfFile: path, encoding: .utf8)
        let signerCertificate = try XCTUnwrap(original.range(of: "(?s)<ds:KeyInfo>.*</ds:KeyInfo>", options: .regularExpression))
        let otherCertificate = try XCTUnwrap(forged.range(of: "(?s)<ds:KeyInfo>.*</ds:KeyInfo>", options: .regularExpression))
        try forged.replacingCharacters(in: otherCertificate, with: original[signerCertificate])
            .write(toFile: path, atomically: true, encoding: .utf8)
        let message = try refusal(allowed)
        XCTAssertTrue(message.hasSuffix("its signature value does not verify with the certificate of asicfs test list signer"), message)
    }

    /// A fingerprint has no key to check with: a list that does not carry its signer's
    /// certificate is refused, whoever signed it.
    func testAListWithoutItsCertificateIsRefusedUnderFingerprints() throws {
        let path = try signedList(by: "signer")
        let signed = try String(contentsOfFile: path, encoding: .utf8)
        let keyInfo = try XCTUnwrap(signed.range(of: "(?s)<ds:KeyInfo>.*</ds:KeyInfo>", options: .regularExpression))
        try signed.replacingCharacters(in: keyInfo, with: "").write(toFile: path, atomically: true, encoding: .utf8)
        let message = try refusal(["tsl=test", "cache-dir=\(folder)/cache", "tsl-signer-sha256=\(try fingerprint("signer"))"])
        XCTAssertTrue(message.hasSuffix("is refused: its signature does not carry the certificate that made it"), message)
        // With the one certificate configured instead, the value check decides, as before.
        XCTAssertEqual(try load(["tsl=test", "cache-dir=\(folder)/cache", "tsl-cert=\(folder)/signer.pem"]).get().certificates.count, 1)
    }

    /// Offline with a refused copy in the cache: the one-line message says the copy was refused
    /// (the likelier story), not only "offline?".
    func testARefusedCachedCopyIsNamedWhenTheDownloadFailsToo() throws {
        try signedList(by: "signer")
        var trust = try environment(["tsl=test", "cache-dir=\(folder)/cache"]).trustSettings
        trust.download = { _ in throw CryptoError("no network in this test") }
        XCTAssertThrowsError(try TrustStore.load(trust)) { error in
            let message = "\(error)"
            XCTAssertTrue(message.hasPrefix("the trusted list could not be downloaded (offline?): trusted list "
                + "https://open-eid.github.io/test-TL/tl-mp-test-EE.xml cannot be downloaded: no network in this test"), message)
            XCTAssertTrue(message.contains("; the cached copy is not used: trusted list \(self.folder)/cache/tl-mp-test-EE.xml "
                + "is refused: it is signed by asicfs test list signer (SHA-256 "), message)
            XCTAssertFalse(message.contains("\n"), message)
        }
    }

    /// `tsl-cert` keeps working: the certificate file replaces the built-in fingerprints.
    func testTslCertStillDecidesWhoMaySign() throws {
        try signedList(by: "signer")
        let cache = "cache-dir=\(folder)/cache"
        XCTAssertEqual(try load(["tsl=test", cache, "tsl-cert=\(folder)/signer.pem"]).get().certificates.count, 1)
        XCTAssertTrue(try refusal(["tsl=test", cache, "tsl-cert=\(folder)/other.pem"])
            .hasSuffix("it is signed by asicfs test list signer, which is not an allowed signer (allowed: asicfs other list signer)"))
        // A list given by path needs tsl-cert or tsl-signer-sha256 to say who may sign it.
        let path = try signedList(by: "signer", as: "own-list.xml")
        XCTAssertEqual(try load(["tsl=\(path)", "tsl-cert=\(folder)/signer.pem"]).get().certificates.count, 1)
        XCTAssertTrue(try refusal(["tsl=\(path)"]).hasSuffix("no tsl-cert is configured to say who may sign it (nor a tsl-signer-sha256)"))
    }
}

private extension Data {
    init(hexString: String) throws {
        var bytes: [UInt8] = []
        var index = hexString.startIndex
        while index < hexString.endIndex {
            let next = hexString.index(index, offsetBy: 2)
            guard let byte = UInt8(hexString[index..<next], radix: 16) else { throw CryptoError("not hex: \(hexString)") }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}

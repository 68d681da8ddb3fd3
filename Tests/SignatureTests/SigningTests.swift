import ASiC
import Configuration
import Crypto
import Foundation
import Signing
import TestTools
import Validation
import XAdES
import XCTest

/// Signing end to end with the PKCS#12 signer against the loopback TSA and OCSP services, then
/// validation of the result with the test PKI's root as the only trust anchor.
final class SigningTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    static var services: TestServices? { shared.services }
    static var folder: String { shared.folder }

    override class func setUp() { shared = SharedTestServices(label: "signing") }
    override class func tearDown() { shared.stop() }

    var services: TestServices { Self.services! }
    var pki: TestPKI { services.pki }

    func environment(_ extra: [String] = []) throws -> SignatureEnvironment {
        let configuration = try Configuration.load(explicitPath: "/dev/null", overrides: [
            "tsa-url=\(services.tsaURL)", "tsl=none", "trust-anchors=\(pki.root)",
            "cache-dir=\(Self.folder)/cache",
        ] + extra)
        return try SignatureEnvironment(configuration: configuration)
    }

    func passphraseFile(_ text: String = TestPKI.passphrase) throws -> String {
        let path = Self.folder + "/pass-\(UUID().uuidString.prefix(6))"
        try Data((text + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func newContainer(_ files: [(String, [UInt8])]) throws -> Container {
        let path = Self.folder + "/c-\(UUID().uuidString.prefix(8)).asice"
        return try Container.create(at: path, files: files.map { NewDataFile(bytes: $0.1, name: $0.0) })
    }

    func sign(_ container: Container, p12: String? = nil, passphrase: String = TestPKI.passphrase,
              environment: SignatureEnvironment? = nil, details: SignerDetails = SignerDetails()) throws -> SigningOutcome {
        let signer = try PKCS12Signer(file: p12 ?? pki.signerP12, passphrase: SecretBytes(Array(passphrase.utf8)))
        return try SigningSession(container: container, signer: signer, environment: environment ?? self.environment(),
                                  details: details).run { _ in }
    }

    func testSignedContainerValidatesAfterReopening() throws {
        XCTAssertNotNil(Self.services, "the loopback services started")
        let container = try newContainer([("0123456789~#%&()=`@{[]}'.txt", Array("special\n".utf8)),
                                          ("öäüõ.txt", Array("unicode\n".utf8)),
                                          ("big.bin", textLikeBytes(count: 3 << 20))])
        var details = SignerDetails()
        details.roles = ["Board member"]
        details.city = "Tallinn"
        details.country = "Estonia"
        let outcome = try sign(container, details: details)
        XCTAssertEqual(outcome.signatureFile, "META-INF/signatures0.xml")
        XCTAssertEqual(outcome.report.verdict, .valid, outcome.report.text)

        let reopened = try Container.open(container.path)
        let report = try environment().validator().validate(reopened)
        XCTAssertEqual(report.verdict, .valid, report.text)
        let signature = try XCTUnwrap(report.signatures.first)
        XCTAssertEqual(signature.signerName, "JÕEORG,JAAK-KRISTJAN,38001085718")
        XCTAssertEqual(signature.profile, "BES/time-stamp")
        XCTAssertEqual(signature.qualification, "QES")
        XCTAssertEqual(signature.roles, ["Board member"])
        XCTAssertEqual(signature.productionPlace["City"], "Tallinn")
        XCTAssertEqual(Set(signature.signedFiles), Set(reopened.dataFiles.map(\.name)))
        let xml = String(decoding: try reopened.signatureBytes(reopened.signatureFiles[0]), as: UTF8.self)
        XCTAssertTrue(xml.contains("URI=\"0123456789~%23%25%26%28%29%3D%60%40%7B%5B%5D%7D%27.txt\""), xml)
        XCTAssertTrue(xml.contains("URI=\"%C3%B6%C3%A4%C3%BC%C3%B5.txt\""))
        XCTAssertTrue(xml.contains("<ds:SignatureMethod Algorithm=\"http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384\">"))

        // A second signature goes into signatures1.xml with the next Id, and both stay valid.
        let second = try sign(reopened)
        XCTAssertEqual(second.signatureFile, "META-INF/signatures1.xml")
        XCTAssertEqual(second.signatureId, "S1")
        let both = try environment().validator().validate(try Container.open(container.path))
        XCTAssertEqual(both.signatures.map(\.verdict), [.valid, .valid], both.text)
    }

    /// Profile B is still signed when configured, although asicfs's own verify calls it INVALID
    /// (not a long-term signature, as the Estonian references say): the finding is expected then.
    func testProfileBNeedsNoServiceAndIsSignedButInvalid() throws {
        let container = try newContainer([("a.txt", Array("a".utf8))])
        let environment = try environment(["profile=B", "tsa-url=http://127.0.0.1:1/tsa"])
        let outcome = try sign(container, environment: environment)
        XCTAssertEqual(outcome.report.verdict, .invalid, outcome.report.text)
        XCTAssertEqual(outcome.report.findings.filter { $0.severity == .invalid }.map(\.code), ["no-timestamp"], outcome.report.text)
        XCTAssertEqual(outcome.container.signatureFiles.count, 1, "the B signature is written")
        let xml = String(decoding: try outcome.container.signatureBytes(outcome.container.signatureFiles[0]), as: UTF8.self)
        XCTAssertFalse(xml.contains("SignatureTimeStamp"))
    }

    /// Each failure is one clear sentence and leaves the container byte for byte as it was.
    func testFailuresLeaveTheContainerUnchanged() throws {
        let container = try newContainer([("a.txt", Array("a".utf8))])
        let before = try Data(contentsOf: URL(fileURLWithPath: container.path))
        func expectFailure(_ message: String, _ body: () throws -> Void) {
            XCTAssertThrowsError(try body()) { XCTAssertTrue("\($0)".contains(message), "\($0)") }
            XCTAssertEqual(try? Data(contentsOf: URL(fileURLWithPath: container.path)), before, message)
        }
        expectFailure("wrong passphrase for signer.p12") { _ = try sign(container, passphrase: "nope") }
        expectFailure("is revoked") { _ = try sign(container, p12: pki.revokedP12) }
        expectFailure("time-stamp: could not connect to 127.0.0.1") {
            _ = try sign(container, environment: try environment(["tsa-url=http://127.0.0.1:1/tsa"]))
        }
        expectFailure("OCSP: could not connect to 127.0.0.1") {
            _ = try sign(container, environment: try environment(["ocsp-url=http://127.0.0.1:1/ocsp"]))
        }
        expectFailure("cannot read the PKCS#12 file") {
            _ = try PKCS12Signer(file: Self.folder + "/missing.p12", passphrase: SecretBytes([]))
        }
        expectFailure("expired on") {
            // A non-repudiation certificate from the test CA whose notAfter has passed.
            let made = try Shell.sh("""
                set -e; cd '\(Self.folder)'
                openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout expired.key \
                  -subj '/CN=EXPIRED,TEST,1' -out expired.csr 2>/dev/null
                printf 'keyUsage=critical,nonRepudiation\\n' > expired.ext
                openssl x509 -req -in expired.csr -CA '\(pki.issuing)' -CAkey '\(pki.path("issuing.key"))' -days -1 \
                  -extfile expired.ext -out expired.pem 2>/dev/null
                openssl pkcs12 -export -in expired.pem -inkey expired.key -passout pass:x -out expired.p12
                """)
            XCTAssertEqual(made.status, 0, made.stderr)
            _ = try sign(container, p12: Self.folder + "/expired.p12", passphrase: "x")
        }
        expectFailure("not for signing") {
            // The OCSP responder's certificate has no non-repudiation key usage: make a p12 from it.
            let p12 = Self.folder + "/ocsp.p12"
            let made = try Shell.run("openssl", ["pkcs12", "-export", "-in", pki.ocsp, "-inkey", pki.path("ocsp.key"),
                                                 "-passout", "pass:x", "-out", p12])
            XCTAssertEqual(made.status, 0, made.stderr)
            _ = try sign(container, p12: p12, passphrase: "x")
        }
    }

    func testTamperingIsInvalidWithTheRightReason() throws {
        let container = try newContainer([("doc.txt", Array("the original text\n".utf8))])
        let signed = try sign(container).container
        let xml = try signed.signatureBytes(signed.signatureFiles[0])
        let validator = try environment().validator()

        // One byte of a data file: rebuild the container with the same signature file.
        let tamperedData = try newContainer([("doc.txt", Array("the original texT\n".utf8))])
        let withSignature = try tamperedData.savingSignatures(adding: [("META-INF/signatures0.xml", xml)])
        let dataReport = validator.validate(withSignature)
        XCTAssertEqual(dataReport.verdict, .invalid)
        XCTAssertEqual(dataReport.signatures[0].errors.map(\.code), ["reference-digest"], dataReport.text)

        // One byte of SignedProperties (the claimed signing time).
        var text = String(decoding: xml, as: UTF8.self)
        let time = try XCTUnwrap(text.range(of: "<xades:SigningTime>"))
        let digit = text.index(time.upperBound, offsetBy: 3)
        text.replaceSubrange(digit...digit, with: text[digit] == "1" ? "2" : "1")
        let propertiesReport = validator.validate(try newContainer([("doc.txt", Array("the original text\n".utf8))])
            .savingSignatures(adding: [("META-INF/signatures0.xml", Array(text.utf8))]))
        XCTAssertEqual(propertiesReport.verdict, .invalid)
        XCTAssertTrue(propertiesReport.signatures[0].errors.contains { $0.code == "signed-properties" }, propertiesReport.text)

        // Another certificate in KeyInfo (the revoked signer's, same issuer).
        let other = try Certificate.parse(Array(try Data(contentsOf: URL(fileURLWithPath: pki.revoked))))
        let own = try XCTUnwrap(try XAdESSignature.parse(file: "x", bytes: xml).first?.signingCertificate)
        let swapped = String(decoding: xml, as: UTF8.self).replacingOccurrences(
            of: Data(own.der).base64EncodedString(), with: Data(other.der).base64EncodedString())
        let swapReport = validator.validate(try newContainer([("doc.txt", Array("the original text\n".utf8))])
            .savingSignatures(adding: [("META-INF/signatures0.xml", Array(swapped.utf8))]))
        XCTAssertEqual(swapReport.verdict, .invalid)
        let codes = Set(swapReport.signatures[0].errors.map(\.code))
        XCTAssertTrue(codes.contains("signature-value"), swapReport.text)
        XCTAssertTrue(codes.contains("signing-certificate"), swapReport.text)
    }

    /// pyasice (PyPI) as an independent validator, plus our own reference checks in Python.
    func testPyasiceAcceptsTheSignature() throws {
        let environment = ProcessInfo.processInfo.environment
        let venv = environment["ASICFS_PYASICE_VENV"]
            ?? ((environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")) + "/asicfs/pyasice-venv")
        guard FileManager.default.isExecutableFile(atPath: venv + "/bin/python") else {
            return XCTFail("pyasice is not installed at \(venv): run scripts/setup-pyasice.sh (make test does)")
        }
        let container = try newContainer([("0123456789~#%&()=`@{[]}'.txt", Array("special\n".utf8)),
                                          ("öäüõ.txt", Array("unicode\n".utf8)), ("report.pdf", textLikeBytes(count: 100_000))])
        // pyasice verifies only RSA-signed OCSP responses: use the test PKI's RSA responder.
        _ = try sign(container, environment: try self.environment(["ocsp-url=\(services.ocspRSAURL)"]))
        var script = URL(fileURLWithPath: #filePath)
        script.deleteLastPathComponent()
        let result = try Shell.run(venv + "/bin/python", [script.path + "/Interop/pyasice_check.py", container.path])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("pyasice verified signatures, time-stamps and OCSP: 1"), result.stdout)
        XCTAssertTrue(result.stdout.contains("digest ok: öäüõ.txt"), result.stdout)
        XCTAssertTrue(result.stdout.contains("digest ok: 0123456789~#%&()=`@{[]}'.txt"), result.stdout)
        XCTAssertTrue(result.stdout.contains("digest ok: SignedProperties"), result.stdout)
        XCTAssertTrue(result.stdout.hasSuffix("ALL OK\n"), result.stdout)

        // The checker is not blind: a changed data file makes it fail.
        let tampered = try newContainer([("0123456789~#%&()=`@{[]}'.txt", Array("special!\n".utf8)),
                                         ("öäüõ.txt", Array("unicode\n".utf8)), ("report.pdf", textLikeBytes(count: 100_000))])
        let reopened = try Container.open(container.path)
        _ = try tampered.savingSignatures(adding: [("META-INF/signatures0.xml", try reopened.signatureBytes(reopened.signatureFiles[0]))])
        let refused = try Shell.run(venv + "/bin/python", [script.path + "/Interop/pyasice_check.py", tampered.path])
        XCTAssertNotEqual(refused.status, 0, refused.stdout)
        XCTAssertTrue((refused.stdout + refused.stderr).contains("digest mismatch: 0123456789"), refused.stdout + refused.stderr)
    }

    func testAContainerChangedDuringSigningIsNotOverwritten() throws {
        let container = try newContainer([("a.txt", Array("a".utf8))])
        // Another program replaces the file after this snapshot was taken.
        let replacement = try newContainer([("b.txt", Array("b".utf8))])
        XCTAssertEqual(rename(replacement.path, container.path), 0)
        let after = try Data(contentsOf: URL(fileURLWithPath: container.path))
        XCTAssertThrowsError(try sign(container)) { XCTAssertTrue("\($0)".contains("changed by another program"), "\($0)") }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: container.path)), after)

        // Rewritten in place (same inode, as `cp other.asice it.asice` does): refused too.
        let inPlace = try newContainer([("c.txt", Array("c".utf8))])
        let other = try newContainer([("d.txt", Array("dd".utf8))])
        let inode = try FileManager.default.attributesOfItem(atPath: inPlace.path)[.systemFileNumber] as? Int
        let copied = try Shell.run("/bin/cp", [other.path, inPlace.path])
        XCTAssertEqual(copied.status, 0, copied.stderr)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: inPlace.path)[.systemFileNumber] as? Int, inode)
        let rewritten = try Data(contentsOf: URL(fileURLWithPath: inPlace.path))
        XCTAssertThrowsError(try sign(inPlace)) { XCTAssertTrue("\($0)".contains("changed by another program"), "\($0)") }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: inPlace.path)), rewritten)
    }
}

import ASiC
import Configuration
import Crypto
import Foundation
import Signing
import TestTools
import Validation
import XAdES
import XCTest

/// XAdES archive time-stamps (LTA): `ArchiveExtension` (asicfs extend) adds them, validation
/// verifies them, and an independent computation of what they cover (lxml, in Python) agrees
/// with the imprint of the token the loopback TSA made.
final class ArchiveTimeStampTests: LoopbackServicesTestCase {
    override class var label: String { "lta" }

    func signedContainer(_ extra: [String] = []) throws -> Container {
        let path = Self.folder + "/lta-\(UUID().uuidString.prefix(8)).asice"
        let container = try Container.create(at: path, files: [NewDataFile(bytes: Array("the contract\n".utf8), name: "contract.txt"),
                                                              NewDataFile(bytes: textLikeBytes(count: 200_000), name: "annex one.txt")])
        let signer = try PKCS12Signer(file: try services.pki.signerP12, passphrase: SecretBytes(Array(TestPKI.passphrase.utf8)))
        return try SigningSession(container: container, signer: signer, environment: try environment(extra)).run { _ in }.container
    }

    func validate(_ container: Container) throws -> SignatureReport {
        let report = try environment().validator().validate(try Container.open(container.path))
        return try XCTUnwrap(report.signatures.first, report.text)
    }

    /// SHA-256 of what archive time-stamp `n` covers, by the independent Python computation.
    func independentDigest(_ container: Container, _ n: Int) throws -> String {
        let venv = ProcessInfo.processInfo.environment["ASICFS_PYASICE_VENV"]
            ?? ((ProcessInfo.processInfo.environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")) + "/asicfs/pyasice-venv")
        var script = URL(fileURLWithPath: #filePath)
        script.deleteLastPathComponent()
        let result = try Shell.run(venv + "/bin/python", [script.path + "/Interop/archive_timestamp_input.py", container.path,
                                                          container.signatureFiles[0].name, String(n)])
        XCTAssertEqual(result.status, 0, "lxml from scripts/setup-pyasice.sh: \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func archiveTokens(_ container: Container) throws -> [TimeStampToken] {
        let signature = try XCTUnwrap(try XAdESSignature.parse(file: container.signatureFiles[0].name,
                                                               bytes: try container.signatureBytes(container.signatureFiles[0])).first)
        return try signature.archiveTimeStamps.map { try TimeStampToken(der: $0.token) }
    }

    func testExtendingAddsArchiveTimeStampsThatVerifyAndCoverWhatTheStandardSays() throws {
        let signed = try signedContainer()
        XCTAssertEqual(try validate(signed).verdict, .valid)
        let (once, extended) = try ArchiveExtension(container: signed, environment: try environment()).run(index: nil)
        XCTAssertEqual(extended.map(\.index), [0])
        var report = try validate(once)
        XCTAssertEqual(report.verdict, .valid, report.text)
        XCTAssertEqual(report.profile, "BES/time-stamp-archive")
        XCTAssertFalse(report.findings.contains { $0.code == "archive-timestamp" }, report.text)
        XCTAssertEqual(try archiveTokens(once).map { $0.imprint.hexString }, [try independentDigest(once, 0)])

        // A second one covers the first (and everything before it).
        let (twice, _) = try ArchiveExtension(container: once, environment: try environment()).run(index: 0)
        report = try validate(twice)
        XCTAssertEqual(report.verdict, .valid, report.text)
        XCTAssertEqual(try archiveTokens(twice).map { $0.imprint.hexString },
                       [try independentDigest(twice, 0), try independentDigest(twice, 1)])
        XCTAssertNotEqual(try independentDigest(twice, 0), try independentDigest(twice, 1))
    }

    /// An archive time-stamp over other bytes (tampered, or of another signature): INVALID.
    func testATamperedArchiveTimeStampIsInvalid() throws {
        let (extended, _) = try ArchiveExtension(container: try signedContainer(), environment: try environment()).run(index: nil)
        let file = extended.signatureFiles[0]
        var text = String(decoding: try extended.signatureBytes(file), as: UTF8.self)
        let other = try TimeStampClient(url: try services.tsaURL, post: try environment().httpClient().post)
            .stamp(digest: Digest.hash(Array("other bytes".utf8), .sha256))
        let start = try XCTUnwrap(text.range(of: "<xades:EncapsulatedTimeStamp xmlns:xades="))
        let open = try XCTUnwrap(text.range(of: ">", range: start.upperBound..<text.endIndex))
        let close = try XCTUnwrap(text.range(of: "</xades:EncapsulatedTimeStamp></xades141:ArchiveTimeStamp>", range: open.upperBound..<text.endIndex))
        text.replaceSubrange(open.upperBound..<close.lowerBound, with: Data(other.der).base64EncodedString())
        let tampered = try extended.savingSignatures(adding: [(file.name, Array(text.utf8))], removing: [file.name])
        let report = try validate(tampered)
        XCTAssertEqual(report.verdict, .invalid, report.text)
        XCTAssertTrue(report.findings.contains { $0.code == "archive-timestamp" && $0.message.contains("does not verify") }, report.text)
    }

    /// Only LT signatures get one; a bad number is refused; nothing is written either way.
    func testExtendRefusesWhatItCannotExtend() throws {
        let bProfile = try signedContainer(["profile=B"])
        let before = try Data(contentsOf: URL(fileURLWithPath: bProfile.path))
        XCTAssertThrowsError(try ArchiveExtension(container: bProfile, environment: try environment()).run(index: nil)) {
            XCTAssertTrue("\($0)".contains("no LT signature"), "\($0)")
        }
        XCTAssertThrowsError(try ArchiveExtension(container: bProfile, environment: try environment()).run(index: 0)) {
            XCTAssertTrue("\($0)".contains("only LT signatures"), "\($0)")
        }
        XCTAssertThrowsError(try ArchiveExtension(container: bProfile, environment: try environment()).run(index: 4)) {
            XCTAssertTrue("\($0)".contains("there is no signature 4"), "\($0)")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: bProfile.path)), before)
    }
}

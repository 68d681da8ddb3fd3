import ASiC
import Configuration
import Crypto
import Foundation
import Signing
import TestTools
import Validation
import XCTest

/// Long-term ASiC-S (ETSI EN 319 162-1): `timestamp.tst` over the data file, then later tokens
/// over `ASiCArchiveManifest*.xml` files that list the data file and the earlier tokens. Every
/// token and manifest is listed and checked (the extra files were ignored, so a container with
/// a broken later time-stamp came out VALID). Tokens come from the loopback TSA of a test PKI.
final class LongTermASiCSTests: LoopbackServicesTestCase {
    override class var label: String { "asics-lt" }

    func stamp(_ bytes: [UInt8]) throws -> [UInt8] {
        let http = try environment().httpClient()
        return try TimeStampClient(url: try services.tsaURL, post: http.post).stamp(digest: Digest.hash(bytes, .sha256)).der
    }

    /// An archive manifest naming `token` and listing `files` (name -> bytes) with SHA-256 digests.
    func manifest(for token: String, listing files: [(String, [UInt8])]) -> [UInt8] {
        let references = files.map { name, bytes in
            "<asic:DataObjectReference URI=\"\(name)\"><ds:DigestMethod Algorithm=\"http://www.w3.org/2001/04/xmlenc#sha256\"/>"
                + "<ds:DigestValue>\(Data(Digest.hash(bytes, .sha256)).base64EncodedString())</ds:DigestValue></asic:DataObjectReference>"
        }.joined()
        return Array(("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>"
            + "<asic:ASiCManifest xmlns:asic=\"http://uri.etsi.org/02918/v1.2.1#\" xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\">"
            + "<asic:SigReference URI=\"\(token)\" MimeType=\"application/vnd.etsi.timestamp-token\"/>" + references
            + "</asic:ASiCManifest>").utf8)
    }

    /// Writes an ASiC-S container with these entries after `mimetype` (Python's zipfile).
    func container(_ entries: [(String, [UInt8])]) throws -> Container {
        let path = Self.folder + "/lt-\(UUID().uuidString.prefix(8)).asics"
        try TestContainers.asics(path, entries)
        return try Container.open(path)
    }

    /// The data file, its first token, and one archive manifest with its token, all sound.
    func longTerm(shape: (inout [(String, [UInt8])]) throws -> Void = { _ in }) throws -> Container {
        let data = Array("the archived document\n".utf8)
        let first = try stamp(data)
        let archive = manifest(for: "META-INF/timestamp002.tst", listing: [("doc.txt", data), ("META-INF/timestamp.tst", first)])
        var entries: [(String, [UInt8])] = [("doc.txt", data), ("META-INF/timestamp.tst", first),
                                            ("META-INF/ASiCArchiveManifest.xml", archive), ("META-INF/timestamp002.tst", try stamp(archive))]
        try shape(&entries)
        return try container(entries)
    }

    func validate(_ container: Container) throws -> ContainerReport {
        try environment().validator().validate(container)
    }

    func testEveryTokenAndManifestIsListedAndASoundSequenceIsValid() throws {
        let container = try longTerm()
        XCTAssertEqual(container.signatureFiles.map(\.name),
                       ["META-INF/timestamp.tst", "META-INF/ASiCArchiveManifest.xml", "META-INF/timestamp002.tst"])
        let report = try validate(container)
        XCTAssertEqual(report.verdict, .valid, report.text)
        XCTAssertEqual(report.signatures.map(\.file), ["META-INF/timestamp.tst", "META-INF/timestamp002.tst"])
        XCTAssertEqual(report.signatures.map(\.profile), ["ASiC-S time-stamp", "ASiC-S archive time-stamp"])
        XCTAssertEqual(report.signatures.last?.signedFiles, ["doc.txt", "META-INF/timestamp.tst"])
    }

    /// A later token that does not verify makes the container INVALID (it was ignored: VALID).
    func testABrokenLaterTokenIsInvalid() throws {
        let container = try longTerm { entries in
            // A token of the TSA, but over other bytes than the manifest.
            entries[3].1 = try self.stamp(Array("something else".utf8))
        }
        let report = try validate(container)
        XCTAssertEqual(report.verdict, .invalid, report.text)
        XCTAssertTrue(report.text.contains("META-INF/ASiCArchiveManifest.xml"), report.text)
    }

    /// An archive manifest whose digests no longer match what it lists, or that leaves out the
    /// earlier token, or that names a token that is not there: INVALID.
    func testArchiveManifestProblemsAreInvalid() throws {
        let changed = try longTerm { entries in
            // The manifest lists a first token other than the one in the container.
            entries[1].1 = try self.stamp(entries[0].1)
        }
        var report = try validate(changed)
        XCTAssertEqual(report.verdict, .invalid, report.text)
        XCTAssertTrue(report.text.contains("'META-INF/timestamp.tst' has changed"), report.text)

        let partial = try longTerm { entries in
            let archive = self.manifest(for: "META-INF/timestamp002.tst", listing: [("doc.txt", entries[0].1)])
            entries[2].1 = archive
            entries[3].1 = try self.stamp(archive)
        }
        report = try validate(partial)
        XCTAssertEqual(report.verdict, .invalid, report.text)
        XCTAssertTrue(report.text.contains("does not cover the earlier time-stamp META-INF/timestamp.tst"), report.text)

        let orphan = try longTerm { entries in entries.removeLast() }
        report = try validate(orphan)
        XCTAssertEqual(report.verdict, .invalid, report.text)
        XCTAssertTrue(report.text.contains("names the time-stamp META-INF/timestamp002.tst, which is not in the container"), report.text)
    }
}

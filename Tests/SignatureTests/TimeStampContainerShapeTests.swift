import ASiC
import Configuration
import Crypto
import Foundation
import Signing
import TestTools
import Validation
import XCTest

/// Container shapes around time-stamp tokens and ASiC-S signatures where asicfs once disagreed
/// with the Estonian references (issue 30): the names an ASiC-S token may have, a CAdES-style
/// time-stamp inside an ASiC-E, and an ASiC-S signature with no manifest to declare media types.
/// Tokens come from the loopback TSA, signatures from `SignatureForge`.
final class TimeStampContainerShapeTests: LoopbackServicesTestCase {
    override class var label: String { "tst-shapes" }

    func stamp(_ bytes: [UInt8]) throws -> [UInt8] {
        let http = try environment().httpClient()
        return try TimeStampClient(url: try services.tsaURL, post: http.post).stamp(digest: Digest.hash(bytes, .sha256)).der
    }

    /// Writes a ZIP with `mimetype` first and then these entries (Python's zipfile).
    func zip(_ mimetype: String, _ entries: [(String, [UInt8])], suffix: String) throws -> String {
        let path = Self.folder + "/shape-\(UUID().uuidString.prefix(8)).\(suffix)"
        let spec = try JSONSerialization.data(withJSONObject: entries.map { [$0.0, Data($0.1).base64EncodedString()] })
        let made = try Shell.python("""
            import base64, json, sys, zipfile
            with zipfile.ZipFile(sys.argv[1], 'w') as z:
                z.writestr(zipfile.ZipInfo('mimetype'), sys.argv[3])
                for name, data in json.loads(sys.argv[2]):
                    z.writestr(name, base64.b64decode(data), compress_type=zipfile.ZIP_DEFLATED)
            """, [path, String(decoding: spec, as: UTF8.self), mimetype])
        XCTAssertEqual(made.status, 0, made.stderr)
        return path
    }

    func validate(_ path: String) throws -> ContainerReport {
        try environment().validator().validate(try Container.open(path))
    }

    let document = Array("the stamped document\n".utf8)

    // MARK: - Item 5: ASiC-S token names

    /// The first token of an ASiC-S is `META-INF/timestamp.tst`: a container whose only token
    /// is `META-INF/timestamp_suffix.tst` is refused (it was taken as the token: VALID).
    func testAnASiCSWhoseOnlyTokenIsNotTimestampTstIsRefused() throws {
        let path = try zip(MediaType.asicS, [("doc.txt", document), ("META-INF/timestamp_suffix.tst", try stamp(document))],
                           suffix: "asics")
        XCTAssertThrowsError(try Container.open(path)) { error in
            XCTAssertTrue("\(error)".contains("META-INF/timestamp.tst"), "\(error)")
        }
        // The same token under its proper name is a sound container (the refusal is the name's).
        let proper = try zip(MediaType.asicS, [("doc.txt", document), ("META-INF/timestamp.tst", try stamp(document))],
                             suffix: "asics")
        XCTAssertEqual(try validate(proper).verdict, .valid)
    }

    /// A later token counts only when an archive manifest names it: one beside
    /// `timestamp.tst` that none names is not a second time-stamp of the data file.
    func testALaterTokenThatNoArchiveManifestNamesDoesNotCount() throws {
        let path = try zip(MediaType.asicS, [("doc.txt", document), ("META-INF/timestamp.tst", try stamp(document)),
                                             ("META-INF/timestamp002.tst", try stamp(document))], suffix: "asics")
        let report = try validate(path)
        XCTAssertEqual(report.verdict, .invalid, report.text)
        XCTAssertTrue(report.text.contains("META-INF/timestamp002.tst"), report.text)
        XCTAssertTrue(report.text.contains("no ASiCArchiveManifest"), report.text)
    }

    // MARK: - Item 6: a time-stamp token in an ASiC-E

    /// An ASiC-E time-stamp container (CAdES-style `META-INF/timestamp.tst` with an
    /// ASiCManifest) is not validated by asicfs: INDETERMINATE, saying so — it was read as
    /// XAdES and reported unreadable (INVALID).
    func testATimeStampTokenInAnASiCEIsUnsupportedNotUnreadable() throws {
        let manifest = Array("""
            <?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">\
            <manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"/>\
            <manifest:file-entry manifest:full-path="doc.txt" manifest:media-type="text/plain"/></manifest:manifest>
            """.utf8)
        let asicManifest = Array(("<?xml version=\"1.0\" encoding=\"UTF-8\"?><asic:ASiCManifest xmlns:asic=\"http://uri.etsi.org/02918/v1.2.1#\" xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\">"
            + "<asic:SigReference URI=\"META-INF/timestamp.tst\" MimeType=\"application/vnd.etsi.timestamp-token\"/>"
            + "<asic:DataObjectReference URI=\"doc.txt\" MimeType=\"text/plain\"><ds:DigestMethod Algorithm=\"http://www.w3.org/2001/04/xmlenc#sha256\"/>"
            + "<ds:DigestValue>\(Data(Digest.hash(document, .sha256)).base64EncodedString())</ds:DigestValue></asic:DataObjectReference></asic:ASiCManifest>").utf8)
        let path = try zip(MediaType.asicE, [("META-INF/manifest.xml", manifest), ("doc.txt", document),
                                             ("META-INF/ASiCManifest.xml", asicManifest),
                                             ("META-INF/timestamp.tst", try stamp(asicManifest))], suffix: "asice")
        let report = try validate(path)
        XCTAssertEqual(report.verdict, .indeterminate, report.text)
        let token = try XCTUnwrap(report.signatures.first { $0.file == "META-INF/timestamp.tst" }, report.text)
        XCTAssertEqual(token.findings.map(\.code), ["unsupported-format"], report.text)
        XCTAssertTrue(token.text.contains("not validated by asicfs"), token.text)
    }

    // MARK: - Item 3: ASiC-S signature media types

    /// An ASiC-S signature over `doc.txt` whose DataObjectFormat says `signedType`, with or
    /// without a manifest declaring `declared`.
    func signedASiCS(signedType: String, declared: String?) throws -> String {
        let services = try services
        let forge = SignatureForge(environment: try environment(), tsaURL: services.tsaURL, p12: services.pki.signerP12)
        let seed = try Container.create(at: Self.folder + "/seed-\(UUID().uuidString.prefix(8)).asice",
                                        files: [NewDataFile(bytes: document, name: "doc.txt")])
        var shaping = SignatureForge.Shaping()
        shaping.signedProperties = {
            $0.replacingOccurrences(of: "<xades:MimeType>text/plain</xades:MimeType>", with: "<xades:MimeType>\(signedType)</xades:MimeType>")
        }
        let signed = try forge.sign(seed, shaping)
        let signature = try signed.signatureBytes(try XCTUnwrap(signed.signatureFiles.first))
        var entries: [(String, [UInt8])] = [("doc.txt", document), ("META-INF/signatures.xml", signature)]
        if let declared {
            entries.append(("META-INF/manifest.xml", Array("""
                <?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">\
                <manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-s+zip"/>\
                <manifest:file-entry manifest:full-path="doc.txt" manifest:media-type="\(declared)"/></manifest:manifest>
                """.utf8)))
        }
        return try zip(MediaType.asicS, entries, suffix: "asics")
    }

    /// Without a manifest no media type is declared: the signed one is not compared with a
    /// guess from the name (it was, and reported as "the manifest says": INVALID).
    func testAnASiCSSignatureWithoutManifestIsNotComparedWithAGuessedMediaType() throws {
        let report = try validate(try signedASiCS(signedType: "application/x-asicfs-test", declared: nil))
        XCTAssertEqual(report.verdict, .valid, report.text)
        XCTAssertFalse(report.text.contains("manifest says"), report.text)
    }

    /// A manifest that declares another media type than the signed one is still a mismatch.
    func testAnASiCSSignatureIsComparedWithTheMediaTypeItsManifestDeclares() throws {
        let report = try validate(try signedASiCS(signedType: "application/x-asicfs-test", declared: "text/plain"))
        XCTAssertEqual(report.verdict, .invalid, report.text)
        XCTAssertTrue(report.text.contains("the manifest says 'text/plain'"), report.text)
    }
}

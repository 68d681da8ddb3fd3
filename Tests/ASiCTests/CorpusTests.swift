@testable import ASiC
import TestTools
import XCTest

/// The libdigidocpp corpus: every container opens or fails exactly as the reference expects.
final class CorpusTests: XCTestCase {
    /// `EXPECTED.tsv`: file name -> expected verdict.
    private func expectedVerdicts() throws -> [String: String] {
        let text = try String(contentsOfFile: TestSupport.corpusFile("EXPECTED.tsv"), encoding: .utf8)
        var verdicts: [String: String] = [:]
        for line in text.split(separator: "\n").dropFirst() {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
            if columns.count >= 2 { verdicts[String(columns[0])] = String(columns[1]) }
        }
        return verdicts
    }

    /// The data files each openable container must list, exactly.
    private let expectedFiles: [String: [String]] = [
        "tsl.asice": ["test.txt"],
        "forged_lt.asice": ["example-for-signing.txt"],
        "test.asice": ["test1.txt"],
        "asice-path.asice": ["folder/test1.txt"],
        "test.asics": ["test1.txt"],
        "test-meta.asics": ["test1.txt"],
        "test-invalidts.asics": ["test2.txt"],
        "test-tera.asics": ["ddoc_for_testing.ddoc"],
        "test-tera-empty.asics": ["emptyFile.ddoc"],
    ]

    /// Words the one-line reason must contain for each container that must be refused.
    private let expectedReasons: [String: String] = [
        "asice-relative.asice": "'..' path segment",
        "dot.asice": "'.' path segment",
        "pt-empty.asice": "empty full-path",
        "test-invalid.asics": "META-INF/manifest.xml is missing",
        "asics-subfolder.asics": "inside a subfolder",
    ]

    func testEveryCorpusContainerOpensOrFailsAsTheReferenceExpects() throws {
        let verdicts = try expectedVerdicts()
        let containers = verdicts.keys.filter { $0.hasSuffix(".asice") || $0.hasSuffix(".asics") }.sorted()
        XCTAssertEqual(containers.count, 14, "the corpus has 14 containers")
        for name in containers {
            let verdict = verdicts[name]!
            if verdict == "fails to open" {
                XCTAssertThrowsError(try Container.open(TestSupport.corpusFile(name)), name) { error in
                    let reason = "\(error)"
                    XCTAssertTrue(reason.contains(expectedReasons[name] ?? "<missing expectation>"), "\(name): \(reason)")
                    XCTAssertFalse(reason.contains("\n"), "one line: \(reason)")
                }
            } else {
                let container = try Container.open(TestSupport.corpusFile(name))
                XCTAssertEqual(container.dataFiles.map(\.name), expectedFiles[name], name)
                for file in container.dataFiles {
                    var count: Int64 = 0
                    try container.read(file.name) { count += Int64($0.count) }
                    XCTAssertEqual(count, file.size, "\(name)/\(file.name)")
                }
            }
        }
    }

    func testSignedCorpusContainersReportTheirSignatureFiles() throws {
        let tsl = try Container.open(TestSupport.corpusFile("tsl.asice"))
        XCTAssertEqual(tsl.kind, .asicE)
        XCTAssertEqual(tsl.signatureFiles.map(\.name), ["META-INF/signatures0.xml"])
        XCTAssertTrue(tsl.isSigned)
        let asics = try Container.open(TestSupport.corpusFile("test.asics"))
        XCTAssertEqual(asics.kind, .asicS)
        XCTAssertEqual(asics.signatureFiles.map(\.name), ["META-INF/timestamp.tst"])
        let unsigned = try Container.open(TestSupport.corpusFile("asice-path.asice"))
        XCTAssertFalse(unsigned.isSigned)
    }

    func testDataFileBytesMatchTheCorpusPayload() throws {
        let container = try Container.open(TestSupport.corpusFile("test.asice"))
        var bytes: [UInt8] = []
        try container.read("test1.txt") { bytes += $0 }
        XCTAssertEqual(bytes, try TestSupport.read(TestSupport.corpusFile("test1.txt")))
        XCTAssertEqual(container.dataFiles[0].mediaType, "file")
    }

    func testXMLBombsAreRefusedAsManifests() throws {
        for bomb in ["xml-bomb-attr.xml", "xml-bomb-cont.xml"] {
            let xml = try TestSupport.read(TestSupport.corpusFile(bomb))
            XCTAssertThrowsError(try Manifest.parse(xml), bomb) { error in
                XCTAssertTrue("\(error)".contains("DTD"), "\(error)")
            }
        }
    }

    func testExternalEntitiesAreNeverLoaded() throws {
        let dtd = TestSupport.corpusFile("xxe-sentinel-dtd.dtd")
        let text = TestSupport.corpusFile("xxe-sentinel.txt")
        let probes = [
            "<?xml version=\"1.0\"?><!DOCTYPE m SYSTEM \"file://\(dtd)\"><manifest:manifest xmlns:manifest=\"\(Manifest.namespace)\"><manifest:file-entry manifest:full-path=\"/\" manifest:media-type=\"&sentinel;\"/></manifest:manifest>",
            "<?xml version=\"1.0\"?><!DOCTYPE m [<!ENTITY x SYSTEM \"file://\(text)\">]><manifest:manifest xmlns:manifest=\"\(Manifest.namespace)\"><manifest:file-entry manifest:full-path=\"/\" manifest:media-type=\"&x;\"/></manifest:manifest>",
        ]
        for probe in probes {
            XCTAssertThrowsError(try Manifest.parse(Array(probe.utf8))) { error in
                XCTAssertFalse("\(error)".contains("XXESENTINEL"))
                XCTAssertTrue("\(error)".contains("DTD"), "\(error)")
            }
        }
    }

    func testContainerWithBombManifestFailsToOpen() throws {
        let folder = try TestSupport.temporaryFolder(self)
        let path = folder + "/bomb.asice"
        let bomb = TestSupport.corpusFile("xml-bomb-cont.xml")
        let result = try Shell.python("""
            import zipfile, sys
            with zipfile.ZipFile(sys.argv[1], 'w') as z:
                z.writestr(zipfile.ZipInfo('mimetype'), 'application/vnd.etsi.asic-e+zip')
                z.writestr('META-INF/manifest.xml', open(sys.argv[2], 'rb').read(), zipfile.ZIP_DEFLATED)
            """, [path, bomb])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertThrowsError(try Container.open(path)) { error in
            XCTAssertTrue("\(error)".contains("META-INF/manifest.xml was refused"), "\(error)")
        }
    }
}

@testable import ASiC
import TestTools
import XCTest

/// The container shapes of the reference implementation's test corpus, made here: every one
/// opens or fails exactly as the reference expects.
final class CorpusTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "asic-corpus") }
    override class func tearDown() { shared.stop() }
    private var folder = ""

    override func setUpWithError() throws {
        folder = try TestSupport.temporaryFolder(self)
    }

    private func file(_ name: String) -> String { folder + "/" + name }

    /// Writes every shape into the test's folder, ASiC-S time-stamped by the loopback TSA.
    private func makeCorpus() throws {
        let services = try XCTUnwrap(Self.shared.services, "the loopback TSA: \(Self.shared.failure ?? "")")
        let token = { (data: Data) in try TestContainers.timeStampToken(over: data, tsaURL: services.tsaURL, in: self.folder) }
        let ddoc = Data(TestContainers.ddoc.utf8)
        try TestContainers.signedShape(file("tsl.asice"), dataFile: "test.txt")
        try TestContainers.signedShape(file("forged_lt.asice"), dataFile: "example-for-signing.txt")
        try TestContainers.signedShape(file("test.asice"), dataFile: "test1.txt", mediaType: "file")
        try TestContainers.withSubfolderEntry(file("asice-path.asice"))
        try TestContainers.withDotDotSegment(file("asice-relative.asice"))
        try TestContainers.withDotName(file("dot.asice"))
        try TestContainers.withEmptyManifestPath(file("pt-empty.asice"))
        try TestContainers.timeStamped(file("test.asics"), token: try token(TestContainers.payload))
        try TestContainers.timeStamped(file("test-meta.asics"), token: try token(TestContainers.payload), withManifest: true)
        // Its token is over other bytes: the message imprint does not match (opening does not check).
        try TestContainers.timeStamped(file("test-invalidts.asics"), dataFile: "test2.txt", data: Data("other text".utf8),
                                       token: try token(TestContainers.payload))
        try TestContainers.timeStamped(file("test-tera.asics"), dataFile: "ddoc_for_testing.ddoc", data: ddoc, token: try token(ddoc))
        try TestContainers.timeStamped(file("test-tera-empty.asics"), dataFile: "emptyFile.ddoc", data: Data(), token: try token(Data()),
                                       withManifest: true)
        try TestContainers.asicsWithASiCEMimetype(file("test-invalid.asics"), token: try token(TestContainers.payload))
        try TestContainers.asicsWithSubfolder(file("asics-subfolder.asics"), token: try token(TestContainers.payload))
        try Data(TestContainers.payload).write(to: URL(fileURLWithPath: file("test1.txt")))
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
        try makeCorpus()
        let containers = try FileManager.default.contentsOfDirectory(atPath: folder)
            .filter { $0.hasSuffix(".asice") || $0.hasSuffix(".asics") }.sorted()
        XCTAssertEqual(containers.count, 14, "the corpus has 14 containers")
        for name in containers {
            if expectedReasons[name] != nil {
                XCTAssertThrowsError(try Container.open(file(name)), name) { error in
                    let reason = "\(error)"
                    XCTAssertTrue(reason.contains(expectedReasons[name] ?? "<missing expectation>"), "\(name): \(reason)")
                    XCTAssertFalse(reason.contains("\n"), "one line: \(reason)")
                }
            } else {
                let container = try Container.open(file(name))
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
        try makeCorpus()
        let tsl = try Container.open(file("tsl.asice"))
        XCTAssertEqual(tsl.kind, .asicE)
        XCTAssertEqual(tsl.signatureFiles.map(\.name), ["META-INF/signatures0.xml"])
        XCTAssertTrue(tsl.isSigned)
        let asics = try Container.open(file("test.asics"))
        XCTAssertEqual(asics.kind, .asicS)
        XCTAssertEqual(asics.signatureFiles.map(\.name), ["META-INF/timestamp.tst"])
        let unsigned = try Container.open(file("asice-path.asice"))
        XCTAssertFalse(unsigned.isSigned)
    }

    func testDataFileBytesMatchTheCorpusPayload() throws {
        try makeCorpus()
        let container = try Container.open(file("test.asice"))
        var bytes: [UInt8] = []
        try container.read("test1.txt") { bytes += $0 }
        XCTAssertEqual(bytes, try TestSupport.read(file("test1.txt")))
        XCTAssertEqual(container.dataFiles[0].mediaType, "file")
    }

    func testXMLBombsAreRefusedAsManifests() throws {
        for bomb in [TestContainers.xmlBombInAttribute, TestContainers.xmlBombInContent] {
            let xml = Array(bomb.utf8)
            XCTAssertThrowsError(try Manifest.parse(xml), bomb) { error in
                XCTAssertTrue("\(error)".contains("DTD"), "\(error)")
            }
        }
    }

    func testExternalEntitiesAreNeverLoaded() throws {
        let (text, dtd) = try TestContainers.writeXXETargets(in: folder)
        let probes = [
            "<?xml version=\"1.0\"?><!DOCTYPE m SYSTEM \"file://\(dtd)\"><manifest:manifest xmlns:manifest=\"\(Manifest.namespace)\"><manifest:file-entry manifest:full-path=\"/\" manifest:media-type=\"&sentinel;\"/></manifest:manifest>",
            "<?xml version=\"1.0\"?><!DOCTYPE m [<!ENTITY x SYSTEM \"file://\(text)\">]><manifest:manifest xmlns:manifest=\"\(Manifest.namespace)\"><manifest:file-entry manifest:full-path=\"/\" manifest:media-type=\"&x;\"/></manifest:manifest>",
        ]
        for probe in probes {
            XCTAssertThrowsError(try Manifest.parse(Array(probe.utf8))) { error in
                XCTAssertFalse("\(error)".contains(TestContainers.xxeSentinel))
                XCTAssertTrue("\(error)".contains("DTD"), "\(error)")
            }
        }
    }

    func testContainerWithBombManifestFailsToOpen() throws {
        let path = folder + "/bomb.asice"
        let bomb = try TestSupport.write(Array(TestContainers.xmlBombInContent.utf8), to: folder + "/xml-bomb-cont.xml")
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

import Foundation
import TestTools
import XCTest

/// Container shapes other producers write, opened (or refused) the way the reference does, and
/// refusals that say exactly what is wrong.
final class ContainerShapeTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "cli-shapes") }
    override class func tearDown() { shared.stop() }

    /// An ASiC-S of test1.txt time-stamped by the loopback TSA: mimetype, test1.txt,
    /// META-INF/timestamp.tst.
    func timeStampedASiCS() throws -> String {
        let services = try XCTUnwrap(Self.shared.services, "the loopback TSA: \(Self.shared.failure ?? "")")
        let token = try TestContainers.timeStampToken(over: TestContainers.payload, tsaURL: services.tsaURL, in: root.path)
        try TestContainers.timeStamped(path("test.asics"), token: token)
        return path("test.asics")
    }

    /// Rewrites the ZIP `source` with its entries in `order` (names; others dropped), adding
    /// `extra` (name -> text) entries at the end, with Python's zipfile.
    func rezip(_ source: String, to target: String, order: [String], extra: [String: String] = [:]) throws {
        let spec = try JSONSerialization.data(withJSONObject: ["order": order, "extra": extra])
        let script = """
            import json, sys, zipfile
            spec = json.loads(sys.argv[3])
            src = zipfile.ZipFile(sys.argv[1])
            with zipfile.ZipFile(sys.argv[2], 'w') as z:
                for name in spec['order']:
                    info = src.getinfo(name)
                    z.writestr(info, src.read(name), compress_type=info.compress_type)
                for name, text in spec['extra'].items():
                    z.writestr(name, text)
            """
        let result = try runTool("/usr/bin/env", ["python3", "-c", script, source, target, String(decoding: spec, as: UTF8.self)])
        guard result.status == 0 else { throw TestSetupError("python3 failed: \(result.stderr)") }
    }

    func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    /// The reference accepts an ASiC-S whose mimetype is not the first entry; ASiC-E it refuses.
    func testAnASiCSWhoseMimetypeComesLaterOpens() throws {
        let later = path("later.asics")
        try rezip(try timeStampedASiCS(), to: later, order: ["test1.txt", "mimetype", "META-INF/timestamp.tst"])
        let text = try asicfs(["ls", later])
        assertSuccess(text)
        XCTAssertTrue(text.stdout.contains("test1.txt"), text.stdout)
        let json = try listing(later)
        XCTAssertEqual(dataFiles(of: json).map { $0["name"] as? String }, ["test1.txt"])

        let asice = path("later.asice")
        try makeContainerWithPython(path("first.asice"), files: [("a.txt", "alpha\n")])
        try rezip(path("first.asice"), to: asice, order: ["a.txt", "mimetype", "META-INF/manifest.xml"])
        assertFailure(try asicfs(["ls", asice]), mentions: ["'mimetype' entry is not the first entry"])
    }

    /// ASiC-S needs no manifest, and one without a '/' entry or media types is fine.
    func testAnASiCSManifestIsOptionalAndNeedsNoMediaTypes() throws {
        let bare = path("bare-manifest.asics")
        try rezip(try timeStampedASiCS(), to: bare, order: ["mimetype", "test1.txt", "META-INF/timestamp.tst"],
                  extra: ["META-INF/manifest.xml": """
                    <?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="test1.txt"/></manifest:manifest>
                    """])
        assertSuccess(try asicfs(["ls", bare]))
        assertSuccess(try asicfs(["ls", try timeStampedASiCS()]))
    }

    /// An ASiC-S holds one signature or one time-stamp, as the reference reads it.
    func testAnASiCSWithATimeStampAndASignatureOrTwoSignaturesIsRefused() throws {
        let both = path("both.asics")
        try rezip(try timeStampedASiCS(), to: both, order: ["mimetype", "test1.txt", "META-INF/timestamp.tst"],
                  extra: ["META-INF/signatures0.xml": "<x/>"])
        assertFailure(try asicfs(["ls", both]), mentions: ["a signature or a time-stamp, not both"])
        let two = path("two.asics")
        try rezip(try timeStampedASiCS(), to: two, order: ["mimetype", "test1.txt"],
                  extra: ["META-INF/signatures0.xml": "<x/>", "META-INF/signatures1.xml": "<y/>"])
        assertFailure(try asicfs(["ls", two]), mentions: ["one signature, not 2"])
    }

    /// An unsigned ASiC-S opens and lists like an unsigned ASiC-E (it was refused).
    func testAnUnsignedASiCSOpensAndLists() throws {
        let unsigned = path("unsigned.asics")
        try rezip(try timeStampedASiCS(), to: unsigned, order: ["mimetype", "test1.txt"])
        let text = try asicfs(["ls", unsigned])
        assertSuccess(text)
        XCTAssertTrue(text.stdout.contains("test1.txt"), text.stdout)
        let json = try listing(unsigned)
        XCTAssertEqual((json["signatures"] as? [Any])?.count, 0)
        let out = work.appendingPathComponent("out").path
        assertSuccess(try asicfs(["extract", unsigned, "-d", out]))
        XCTAssertEqual(try String(contentsOfFile: out + "/test1.txt", encoding: .utf8).isEmpty, false)
    }

    /// Three different sentences for three different mimetype problems.
    func testMimetypeProblemsAreToldApart() throws {
        try makeContainerWithPython(path("good.asice"), files: [("a.txt", "alpha\n")])
        let missing = path("missing.asice")
        try rezip(path("good.asice"), to: missing, order: ["a.txt", "META-INF/manifest.xml"])
        assertFailure(try asicfs(["ls", missing]), mentions: ["no 'mimetype' entry"])
        let wrong = path("wrong.asice")
        try rezip(path("good.asice"), to: wrong, order: [], extra: ["mimetype": "application/zip", "a.txt": "alpha\n"])
        assertFailure(try asicfs(["ls", wrong]), mentions: ["'mimetype' entry has the wrong content", "'application/zip'"])
    }

    /// A DDOC is XML, not a broken ZIP: say what it is and where it can be validated.
    func testADDOCIsNamedAsSuch() throws {
        let result = try asicfs(["ls", try write("test.ddoc", TestContainers.ddoc)])
        assertFailure(result, mentions: ["DDOC", "not supported", "SiVa"])
        XCTAssertFalse(result.stderr.contains("not a valid ZIP"), result.stderr)
    }

    /// Bytes before the ZIP: the refusal says exactly that, with the count.
    func testAZipWithAPrefixSaysSo() throws {
        try makeContainerWithPython(path("good.asice"), files: [("a.txt", "alpha\n")])
        var bytes = Data("#!/bin/sh\nexit 0\n".utf8)
        bytes.append(try read(path("good.asice")))
        try bytes.write(to: URL(fileURLWithPath: path("prefixed.asice")))
        assertFailure(try asicfs(["ls", path("prefixed.asice")]), mentions: ["17 bytes before its ZIP data", "prefix"])
    }
}

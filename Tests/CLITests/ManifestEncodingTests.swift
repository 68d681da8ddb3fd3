import Foundation
import TestTools
import XCTest

/// A manifest need not be UTF-8: XML declares its encoding, and the reference implementation
/// (Xerces) reads UTF-16 and UTF-32 as well. asicfs reads them too, and the rule that no DTD or
/// entity is ever accepted still holds, checked on the decoded text.
final class ManifestEncodingTests: CLITestCase {
    static let files = [("a.txt", "alpha\n"), (umlautName, "umlauts\n")]

    func testUTF16AndUTF32ManifestsAreRead() throws {
        // Python codec, with or without a byte order mark (XML 1.0 appendix F finds both).
        for codec in ["utf-16", "utf-16-be", "utf-16-le", "utf-32", "utf-32-le"] {
            let container = path("\(codec).asice")
            try makeContainer(container, manifestCodec: codec)
            XCTAssertEqual(try dataFileNames(container), Self.files.map(\.0), codec)
            let types = dataFiles(of: try listing(container)).compactMap { $0["media_type"] as? String }
            XCTAssertEqual(types, ["text/plain", "text/plain"], codec)
            let out = work.appendingPathComponent("out-\(codec)").path
            assertSuccess(try asicfs(["extract", container, "-d", out]))
            XCTAssertEqual(try read(out + "/" + Self.umlautName), Data("umlauts\n".utf8), codec)
        }
    }

    func testADoctypeInAnyEncodingIsStillRefused() throws {
        let doctype = "<!DOCTYPE manifest:manifest [<!ENTITY t \"text/plain\">]>"
        for codec in ["utf-16", "utf-16-be", "utf-32", "cp037"] {
            let container = path("dtd-\(codec).asice")
            try makeContainer(container, manifestCodec: codec, doctype: doctype, mediaType: "&t;")
            assertFailure(try asicfs(["ls", container]),
                          mentions: ["META-INF/manifest.xml was refused", "it declares a DTD or entities"])
        }
    }

    func testOtherDeclaredEncodingsAreDecodedBeforeTheDoctypeCheck() throws {
        for codec in ["utf-7", "iso-8859-1", "cp1252", "cp037"] {   // cp037: EBCDIC
            let container = path("\(codec).asice")
            try makeContainer(container, manifestCodec: codec)
            XCTAssertEqual(try dataFileNames(container), Self.files.map(\.0), codec)
        }
        // UTF-7 can write "<!" as "+ADwAIQ-": an entity bomb, spelled so, is refused as what it
        // is (before, libxml2 met it with the DOCTYPE check passed).
        let bomb = TestContainers.xmlBombInAttribute
        let doctype = String(bomb[bomb.range(of: "<!DOCTYPE")!.lowerBound..<bomb.range(of: "]>")!.upperBound])
        let hidden = path("utf7-bomb.asice")
        try makeContainer(hidden, manifestCodec: "utf-7", doctype: doctype, mediaType: "&ent9;", hideMarkupStart: true)
        assertFailure(try asicfs(["ls", hidden]), mentions: ["META-INF/manifest.xml was refused", "it declares a DTD or entities"])

        let unknown = path("unknown.asice")
        try makeContainer(unknown, manifestCodec: "iso-8859-1", declaring: "X-NO-SUCH-ENCODING")
        assertFailure(try asicfs(["ls", unknown]), mentions: ["declares the encoding 'X-NO-SUCH-ENCODING', which asicfs cannot read"])
    }

    /// An ASiC-E container whose manifest is written in `manifestCodec` (a Python codec name),
    /// declaring that encoding (or `declaring`). `hideMarkupStart` writes every "<!" as UTF-7's
    /// "+ADwAIQ-".
    private func makeContainer(_ path: String, manifestCodec: String, declaring: String? = nil, doctype: String = "",
                               mediaType: String = "text/plain", hideMarkupStart: Bool = false) throws {
        let spec = try JSONSerialization.data(withJSONObject: Self.files.map { ["name": $0.0, "content": $0.1] })
        let specPath = try write("spec-\(UUID().uuidString).json", spec, in: root)
        let script = """
        import codecs, json, sys, zipfile
        from xml.sax.saxutils import quoteattr
        path, spec, codec, doctype, media, declaring, hide = sys.argv[1:8]
        files = json.load(open(spec, encoding='utf-8'))
        name = codecs.lookup(codec).name
        declared = {'utf-16-be': 'UTF-16', 'utf-16-le': 'UTF-16', 'utf-32-le': 'UTF-32', 'cp037': 'IBM037',
                    'iso8859-1': 'ISO-8859-1'}.get(name, name.upper())
        declared = declaring or declared
        xml = ('<?xml version="1.0" encoding="%s"?>' % declared + doctype
               + '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
               + '<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"/>'
               + ''.join('<manifest:file-entry manifest:full-path=%s manifest:media-type="%s"/>' % (quoteattr(f['name']), media)
                         for f in files)
               + '</manifest:manifest>')
        with zipfile.ZipFile(path, 'w') as z:
            z.writestr(zipfile.ZipInfo('mimetype'), 'application/vnd.etsi.asic-e+zip')
            for f in files:
                z.writestr(f['name'], f['content'].encode('utf-8'), compress_type=zipfile.ZIP_DEFLATED)
            raw = xml.encode(codec)
            if hide == 'hide':
                raw = raw.replace(b'<!', b'+ADwAIQ-')
            z.writestr('META-INF/manifest.xml', raw, compress_type=zipfile.ZIP_DEFLATED)
        """
        let result = try runTool("/usr/bin/env", ["python3", "-c", script, path, specPath, manifestCodec, doctype, mediaType,
                                                      declaring ?? "", hideMarkupStart ? "hide" : ""])
        guard result.status == 0 else { throw TestSetupError("python3 failed: \(result.stderr)") }
    }
}

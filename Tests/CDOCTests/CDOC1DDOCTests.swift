import Crypto
import Foundation
import XCTest
@testable import CDOC

/// A DDOC 1.3 (CDOC 1.x's wrapper of several files) is parsed as its decrypted bytes arrive:
/// file by file to the sink, the same files whatever the pieces, and a broken one fails with one
/// line (the caller then makes the sink drop what it got).
final class CDOC1DDOCTests: CDOCTestCase {
    private func files(_ ddoc: [UInt8], pieces sizes: [Int]) throws -> [(name: String, bytes: [UInt8])] {
        let sink = MemorySink()
        let parser = CDOC1DDOC(into: sink)
        try feedInPieces(ddoc, sizes, parser.feed)
        try parser.finish()
        return sink.files
    }

    func testSeveralFilesInAnyPiecesComeOutFileByFile() throws {
        let names = ["esimene.txt", "päev ☀.bin", "empty", "last & final.pdf"]
        let contents = [randomBytes(10_000), randomBytes(70_001), [], randomBytes(3)]
        let ddoc = DDOCBuilder.document(names: names, contents: contents)
        for sizes in [[ddoc.count], [1], [2], [5, 1, 3], [64], [4093]] {
            let files = try self.files(ddoc, pieces: sizes)
            XCTAssertEqual(files.map(\.name), names, "pieces \(sizes)")
            XCTAssertEqual(files.map(\.bytes), contents, "pieces \(sizes)")
        }
    }

    /// References, comments and one long line of base64 (as other writers make) read the same.
    func testReferencesCommentsAndLongLinesReadTheSame() throws {
        let content = randomBytes(5_000)
        let base64 = Data(content).base64EncodedString()
        let text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><SignedDoc xmlns=\"\(CDOC1Names.ddocNamespace)\" format=\"DIGIDOC-XML\" version=\"1.3\">"
            + "<DataFile ContentType=\"EMBEDDED_BASE64\" Filename=\"a.bin\" Id=\"D0\">&#\(base64.utf8.first!);" + base64.dropFirst(1).prefix(999)
            + "<!-- c -->" + base64.dropFirst(1000) + "</DataFile><DataFile Filename=\"b.bin\" Id=\"D1\">\(base64)</DataFile></SignedDoc>"
        for sizes in [[text.utf8.count], [1], [3], [997]] {
            let files = try self.files(Array(text.utf8), pieces: sizes)
            XCTAssertEqual(files.map(\.name), ["a.bin", "b.bin"])
            XCTAssertEqual(files.map(\.bytes), [content, content], "pieces \(sizes)")
        }
    }

    func testBrokenDDOCsFailInOneLine() throws {
        let start = "<SignedDoc xmlns=\"\(CDOC1Names.ddocNamespace)\" format=\"DIGIDOC-XML\" version=\"1.3\">"
        let cases: [(String, CDOCError.Code)] = [
            (start + "<DataFile Id=\"D0\">eA==</DataFile></SignedDoc>", .malformed),
            (start + "<DataFile Filename=\"../x\">eA==</DataFile></SignedDoc>", .unsafeName),
            (start + "<DataFile Filename=\"x\">eA==</DataFile><DataFile Filename=\"x\">eA==</DataFile></SignedDoc>", .unsafeName),
            (start + "<DataFile Filename=\"x\" ContentType=\"DETATCHED\">eA==</DataFile></SignedDoc>", .unsupported),
            (start + "<DataFile Filename=\"x\">e*A==</DataFile></SignedDoc>", .malformed),
            (start + "<DataFile Filename=\"x\">eA=</DataFile></SignedDoc>", .malformed),
            (start + "</SignedDoc>", .malformed),
            ("<Other><DataFile Filename=\"x\">eA==</DataFile></Other>", .malformed),
            (start + "<DataFile Filename=\"x\">eA==</DataFile>", .malformed),
            ("<!DOCTYPE d [<!ENTITY e \"x\">]>" + start + "<DataFile Filename=\"x\">&e;</DataFile></SignedDoc>", .malformed),
        ]
        for (text, code) in cases {
            for sizes in [[text.utf8.count], [1]] {
                XCTAssertThrowsError(try files(Array(text.utf8), pieces: sizes), text) { error in
                    XCTAssertEqual((error as? CDOCError)?.code, code, "\(text): \(error)")
                    XCTAssertFalse("\(error)".contains("\n"), "one line: \(error)")
                }
            }
        }
    }
}

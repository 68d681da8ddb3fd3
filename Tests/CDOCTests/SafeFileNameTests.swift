import XCTest
@testable import CDOC

final class SafeFileNameTests: XCTestCase {
    func testPlainNamesPassIncludingUnicode() throws {
        for name in ["a.txt", "Leping 2024.pdf", "õun ja pirn.docx", ".hidden", "x" + String(repeating: "y", count: 254)] {
            XCTAssertEqual(try SafeFileName.check(name), name)
        }
    }

    func testPathsDevicesControlsAndEdgesAreRefused() {
        for name in ["", ".", "..", "a/b", "/etc/passwd", "a\\b", "x:y", "q?", "star*", "<a>", "pipe|", "quote\"",
                     " lead", "-rf", "trail ", "dot.", "CON", "com1.txt", "LPT9", "nul.tar.gz",
                     "tab\there", "new\nline", "del\u{7F}", "c1\u{85}", "rlo\u{202E}fdp.exe", "iso\u{2066}x", "non\u{FFFE}char",
                     String(repeating: "é", count: 128)] {
            XCTAssertThrowsError(try SafeFileName.check(name), name) { error in
                XCTAssertEqual((error as? CDOCError)?.code, .unsafeName)
                XCTAssertFalse("\(error)".unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x202E }, "escaped: \(error)")
            }
        }
    }

    func testANameTwiceIsRefused() {
        XCTAssertNoThrow(try SafeFileName.checkAll(["a", "b", "A"]))
        XCTAssertThrowsError(try SafeFileName.checkAll(["a", "b", "a"])) { XCTAssertEqual(($0 as? CDOCError)?.code, .unsafeName) }
    }
}

import SafeXML
import XCTest

/// The one escaping of text this project writes into XML (XAdES, the ASiC manifest, CDOC 1.x):
/// what a parser reads back is what was written, except the control characters XML 1.0 cannot hold.
final class XMLTextTests: XCTestCase {
    private func readBack(_ text: String) throws -> (element: String, attribute: String?) {
        let xml = "<v a=\"\(XMLText.escaped(text, inAttribute: true))\">\(XMLText.escaped(text))</v>"
        let document = try SafeXMLDocument.parse(Array(xml.utf8), name: "test")
        let root = try XCTUnwrap(document.root)
        return (root.text, root.attribute("a", namespace: nil))
    }

    func testMarkupAndLineEndsSurviveAParserInElementsAndAttributes() throws {
        for text in ["a & b < c > d \"e\" 'f'", "line one\r\nline two\rthree\n", "tab\there", "Õun šokolaad 🍫", "&amp;"] {
            let (element, attribute) = try readBack(text)
            XCTAssertEqual(element, text)
            XCTAssertEqual(attribute, text)
        }
    }

    func testControlCharactersXMLCannotHoldAreLeftOutAndTheDocumentStaysWellFormed() throws {
        let (element, attribute) = try readBack("a\u{1}b\u{8}c\u{1B}[31md\u{1F}\u{FFFE}")
        XCTAssertEqual(element, "abc[31md")
        XCTAssertEqual(attribute, "abc[31md")
    }
}

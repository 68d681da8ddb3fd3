import Foundation
import XCTest
@testable import CDOC

/// The streaming base64 of CDOC 1.x payloads and DDOC contents is Foundation's 64-character
/// lines (LF between lines, none after the last) for every length and every way of cutting the input.
final class CDOC1Base64LinesTests: XCTestCase {
    private func foundation(_ bytes: [UInt8]) -> [UInt8] {
        Array(Data(bytes).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed]).utf8)
    }

    func testEveryLengthInEveryCutIsFoundationsText() throws {
        for length in Array(0...200) + [4_095, 4_096, 65_536, 200_001] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255) }
            XCTAssertEqual(CDOC1Base64Lines.encode(bytes), foundation(bytes), "\(length) bytes at once")
            for cut in [1, 2, 47, 49, 1000] where cut < length {
                var text: [UInt8] = []
                let lines = CDOC1Base64Lines { text += $0 }
                var offset = 0
                while offset < length {
                    let end = min(offset + cut, length)
                    try lines.add(Array(bytes[offset..<end]))
                    offset = end
                }
                try lines.finish()
                XCTAssertEqual(text, foundation(bytes), "\(length) bytes in pieces of \(cut)")
            }
        }
    }

    func testTheTextComesInPiecesOfAtMost64KiB() throws {
        var pieces: [Int] = []
        let lines = CDOC1Base64Lines { pieces.append($0.count) }
        try lines.add([UInt8](repeating: 7, count: 1 << 20))
        try lines.finish()
        XCTAssertLessThanOrEqual(pieces.max() ?? 0, 64 << 10)
        XCTAssertEqual(pieces.reduce(0, +), foundation([UInt8](repeating: 7, count: 1 << 20)).count)
    }
}

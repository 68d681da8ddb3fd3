import Foundation
import TestTools
import XCTest

/// The card emulator the ID-card tests rely on (contrib/card) has tests of its own: its PACE and
/// secure messaging against the ICAO 9303 worked examples, and both cards' behaviour. They run
/// here so that CI keeps the emulator honest too.
final class CardEmulatorTests: XCTestCase {
    func testTheEmulatorsOwnTestsPass() throws {
        var folder = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { folder.deleteLastPathComponent() }
        let card = folder.path + "/contrib/card"
        let result = try Shell.run("/bin/sh", ["-c", "cd '\(card)' && /usr/bin/python3 -m unittest test_pace_worked_example test_cards"])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stderr.contains("\nOK"), result.stderr)
        let ran = result.stderr.split(separator: "\n").first { $0.hasPrefix("Ran ") }
        XCTAssertNotNil(ran, result.stderr)
        XCTAssertGreaterThanOrEqual(Int(ran?.split(separator: " ")[1] ?? "0") ?? 0, 30, result.stderr)
    }
}

@testable import FS
import XCTest

/// The view's ordered names: order kept through removals, renames and the squeezing of holes,
/// and folder counts that follow every change.
final class OrderedNamesTests: XCTestCase {
    func testOrderAndFoldersSurviveManyRemovalsRenamesAndSqueezes() {
        let names = (0..<1000).map { "d\($0 / 100)/f\($0).txt" }
        var ordered = OrderedNames(names)
        var expected = names
        XCTAssertEqual(Array(ordered), expected)
        XCTAssertTrue(ordered.hasFiles(below: "d3"))
        // Remove most of them (squeezes happen on the way), in an order unlike the list's.
        for index in stride(from: 999, through: 0, by: -1) where index % 7 != 0 {
            ordered.remove(names[index])
            expected.removeAll { $0 == names[index] }
        }
        XCTAssertEqual(Array(ordered), expected)
        XCTAssertEqual(ordered.count, expected.count)
        ordered.rename("d3/f301.txt", to: "e/f301.txt")
        expected = expected.map { $0 == "d3/f301.txt" ? "e/f301.txt" : $0 }
        XCTAssertEqual(Array(ordered), expected, "a rename keeps the place")
        XCTAssertTrue(ordered.hasFiles(below: "e"))
        ordered.append("d0/new.txt")
        expected.append("d0/new.txt")
        XCTAssertEqual(Array(ordered), expected)
        for folder in (0..<10).map({ "d\($0)" }) {
            XCTAssertEqual(ordered.hasFiles(below: folder), expected.contains { $0.hasPrefix(folder + "/") }, folder)
        }
        for name in expected { ordered.remove(name) }
        XCTAssertEqual(Array(ordered), [])
        XCTAssertFalse(ordered.hasFiles(below: "d0"))
        XCTAssertFalse(ordered.hasFiles(below: "e"))
    }

    func testNestedFoldersAreCountedAtEveryLevel() {
        var ordered = OrderedNames(["a/b/c/x.txt", "a/y.txt"])
        XCTAssertTrue(ordered.hasFiles(below: "a/b"))
        XCTAssertTrue(ordered.hasFiles(below: "a/b/c"))
        ordered.remove("a/b/c/x.txt")
        XCTAssertFalse(ordered.hasFiles(below: "a/b"))
        XCTAssertTrue(ordered.hasFiles(below: "a"))
        XCTAssertFalse(ordered.contains("a/b/c/x.txt"))
        XCTAssertTrue(ordered.contains("a/y.txt"))
    }
}

import Foundation
import XCTest

/// Every JSON asicfs prints has one key style (snake_case) and a `format_version`, and a script
/// that asked for JSON gets JSON also when the container cannot be read.
final class JSONOutputTests: CLITestCase {
    /// Every key in `value`, at any depth.
    func keys(_ value: Any) -> [String] {
        if let object = value as? [String: Any] { return object.keys + object.values.flatMap(keys) }
        if let array = value as? [Any] { return array.flatMap(keys) }
        return []
    }

    func assertSnakeCase(_ json: Any, _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        for key in keys(json) {
            XCTAssertTrue(key.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "_" }, "\(label): key '\(key)'", file: file, line: line)
        }
    }

    func testLsAndVerifyUseSnakeCaseWithAFormatVersion() throws {
        try makeContainerWithPython(path("c.asice"), files: [("a.txt", "alpha\n")])
        let ls = try asicfs(["ls", path("c.asice"), "--json"])
        assertSuccess(ls)
        let listed = try XCTUnwrap(try JSONSerialization.jsonObject(with: ls.stdoutData) as? [String: Any])
        XCTAssertEqual(listed["format_version"] as? Int, 1)
        XCTAssertNotNil(listed["data_files"] as? [Any])
        XCTAssertNotNil((listed["data_files"] as? [[String: Any]])?.first?["media_type"])
        assertSnakeCase(listed, "ls")

        let verify = try asicfs(["verify", path("c.asice"), "--json", "-o", "tsl=none"])
        XCTAssertEqual(verify.status, 1, "an unsigned container is not VALID")
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: verify.stdoutData) as? [String: Any])
        XCTAssertEqual(report["format_version"] as? Int, 1)
        assertSnakeCase(report, "verify")
    }

    /// `verify --json` of something that is not a container: a JSON object with the error on
    /// stdout, the one-line error on stderr, exit 1 (it printed no JSON at all).
    func testVerifyJSONOfAnUnreadableContainerIsAJSONError() throws {
        let broken = try write("broken.asice", "not a zip at all, just text\n")
        for target in [broken, path("missing.asice")] {
            let result = try asicfs(["verify", target, "--json"])
            XCTAssertEqual(result.status, 1, result.stderr)
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: result.stdoutData) as? [String: Any], result.stdout)
            XCTAssertEqual(object["format_version"] as? Int, 1)
            XCTAssertEqual(object["path"] as? String, target)
            let error = try XCTUnwrap(object["error"] as? String)
            XCTAssertFalse(error.isEmpty)
            XCTAssertTrue(result.stderr.hasPrefix("asicfs: ") && result.stderr.filter { $0 == "\n" }.count == 1, result.stderr)
        }
    }
}

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

    func object(_ result: RunResult, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let value = try XCTUnwrap(try JSONSerialization.jsonObject(with: result.stdoutData) as? [String: Any], result.stdout, file: file, line: line)
        XCTAssertEqual(value["format_version"] as? Int, 1, file: file, line: line)
        assertSnakeCase(value, "\(value["command"] ?? "?")", file: file, line: line)
        return value
    }

    /// create, add, remove and extract print one object with --json, on success and on failure
    /// (with the same exit status and the one line on stderr).
    func testEditingCommandsPrintOneObjectOnSuccessAndOnFailure() throws {
        let container = path("j.asice")
        try write("a.txt", "alpha\n")
        try write("b.txt", "bravo\n")
        var result = try asicfs(["create", container, path("a.txt"), "--json"])
        assertSuccess(result)
        var value = try object(result)
        XCTAssertEqual(value["command"] as? String, "create")
        XCTAssertEqual(value["ok"] as? Bool, true)
        XCTAssertEqual(value["data_files"] as? [String], ["a.txt"])

        result = try asicfs(["add", container, path("b.txt"), "--json"])
        assertSuccess(result)
        value = try object(result)
        XCTAssertEqual(value["added"] as? [String], ["b.txt"])
        XCTAssertEqual(value["data_files"] as? [String], ["a.txt", "b.txt"])

        result = try asicfs(["add", container, path("b.txt"), "--json"])
        XCTAssertEqual(result.status, 1)
        value = try object(result)
        XCTAssertEqual(value["ok"] as? Bool, false)
        XCTAssertEqual(value["exit_status"] as? Int, 1)
        XCTAssertTrue((value["error"] as? String ?? "").contains("already"), "\(value)")
        XCTAssertTrue(result.stderr.hasPrefix("asicfs: ") && result.stderr.filter { $0 == "\n" }.count == 1, result.stderr)

        result = try asicfs(["extract", container, "-d", path("out"), "--json"])
        assertSuccess(result)
        value = try object(result)
        let extracted = try XCTUnwrap(value["extracted"] as? [[String: String]])
        XCTAssertEqual(extracted.map { $0["name"] }, ["a.txt", "b.txt"])
        XCTAssertEqual(try String(contentsOfFile: try XCTUnwrap(extracted[1]["path"]), encoding: .utf8), "bravo\n")
        result = try asicfs(["extract", container, "--stdout", "--json"])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(try object(result)["exit_status"] as? Int, 2)

        result = try asicfs(["remove", container, "a.txt", "--json"])
        assertSuccess(result)
        value = try object(result)
        XCTAssertEqual(value["removed"] as? [String], ["a.txt"])
        XCTAssertEqual(value["data_files"] as? [String], ["b.txt"])
        result = try asicfs(["remove", container, "zzz.txt", "--json"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(try object(result)["ok"] as? Bool, false)

        result = try asicfs(["add", path("missing.asice"), path("a.txt"), "--json"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(try object(result)["container"] as? String, path("missing.asice"))
    }
}

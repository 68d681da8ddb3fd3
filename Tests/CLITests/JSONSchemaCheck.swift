import Foundation
import XCTest

/// Checks `--json` output against docs/json-schema.json with python3-jsonschema (Debian's
/// package, installed by scripts/install-deps.sh), the way a script's author would.
extension CLITestCase {
    static let jsonSchema = packageRoot.appendingPathComponent("docs/json-schema.json").path

    /// Every JSON document on stdout (one pretty object, or JSON Lines), parsed and valid.
    @discardableResult
    func assertValidJSON(_ result: RunResult, file: StaticString = #filePath, line: UInt = #line) throws -> [[String: Any]] {
        let output = try write("schema-check-\(UUID().uuidString).json", result.stdout)
        // raw_decode reads one pretty object and JSON Lines alike; every error is printed.
        let script = """
        import json, sys, jsonschema
        schema = json.load(open(sys.argv[1]))
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
        text, decoder, at, count, bad = open(sys.argv[2]).read(), json.JSONDecoder(), 0, 0, 0
        while True:
            while at < len(text) and text[at].isspace(): at += 1
            if at == len(text): break
            document, at = decoder.raw_decode(text, at)
            count += 1
            for error in validator.iter_errors(document):
                bad += 1
                print("document %d: %s at %s" % (count, error.message, list(error.absolute_path)))
        if count == 0: print("no JSON on stdout")
        sys.exit(1 if bad or count == 0 else 0)
        """
        let check = try runTool("/usr/bin/python3", ["-c", script, Self.jsonSchema, output])
        XCTAssertEqual(check.status, 0, "\(check.stdout)\(check.stderr)\n--- output:\n\(result.stdout)", file: file, line: line)
        try? FileManager.default.removeItem(atPath: output)
        var documents: [[String: Any]] = []
        for text in result.stdout.hasPrefix("{\n") ? [result.stdout] : result.stdout.split(separator: "\n").map(String.init) {
            documents.append(try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text, file: file, line: line))
        }
        return documents
    }

    /// The one object (or, for sign, the result line) of a --json run, valid against the schema,
    /// with the envelope's names and the given status.
    func envelope(_ result: RunResult, command: String, status: Int32, code: String? = nil,
                  file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let documents = try assertValidJSON(result, file: file, line: line)
        let last = try XCTUnwrap(documents.last, file: file, line: line)
        XCTAssertEqual(result.status, status, result.stderr, file: file, line: line)
        XCTAssertEqual(last["format_version"] as? Int, 2, file: file, line: line)
        XCTAssertEqual(last["command"] as? String, command, file: file, line: line)
        XCTAssertEqual(last["exit_status"] as? Int, Int(status), file: file, line: line)
        XCTAssertEqual(last["ok"] as? Bool, status == 0, file: file, line: line)
        if status == 0 {
            XCTAssertTrue(last["error"] is NSNull, "\(last)", file: file, line: line)
        } else {
            let error = try XCTUnwrap(last["error"] as? [String: Any], "\(last)", file: file, line: line)
            if let code { XCTAssertEqual(error["code"] as? String, code, "\(error)", file: file, line: line) }
            // A failure's message is its one line on stderr (verify's verdict has none: the report says why).
            let message = try XCTUnwrap(error["message"] as? String, file: file, line: line)
            if error["code"] as? String != "not-valid" {
                XCTAssertEqual(result.stderr.split(separator: "\n").last.map(String.init), "asicfs: " + message, file: file, line: line)
            }
        }
        return last
    }
}

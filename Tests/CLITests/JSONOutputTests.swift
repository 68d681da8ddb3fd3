import Foundation
import TestTools
import XCTest

/// Every command that takes --json prints the one envelope of docs/json-schema.json
/// (`format_version` 2, `command`, `ok`, `exit_status`, `error` with a stable `code`), on
/// success and on failure, with the same names for the same things. The schema is checked by
/// python3-jsonschema; the names are checked here too, so a schema that allows too much is caught.
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

    /// A run's envelope, checked against the schema and for the shared names.
    func run(_ arguments: [String], command: String, status: Int32, code: String? = nil, environment: [String: String] = [:],
             file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let result = try asicfs(arguments, environment: environment)
        let value = try envelope(result, command: command, status: status, code: code, file: file, line: line)
        assertSnakeCase(value, command, file: file, line: line)
        XCTAssertNil(value["path"], "the container is 'container' in every output", file: file, line: line)
        if let files = value["data_files"] {
            let objects = try XCTUnwrap(files as? [[String: Any]], "data_files is a list of objects: \(files)", file: file, line: line)
            XCTAssertTrue(objects.allSatisfy { $0["name"] is String }, "\(objects)", file: file, line: line)
        }
        return value
    }

    func testContainerCommandsPrintTheEnvelopeOnSuccessAndFailure() throws {
        let container = path("j.asice")
        try write("a.txt", "alpha\n")
        try write("b.txt", "bravo\n")
        let broken = try write("broken.asice", "not a zip at all, just text\n")
        let missing = path("missing.asice")

        var value = try run(["create", container, path("a.txt"), "--json"], command: "create", status: 0)
        XCTAssertEqual(value["container"] as? String, container)
        XCTAssertEqual((value["data_files"] as? [[String: Any]])?.map { $0["name"] as? String }, ["a.txt"])
        _ = try run(["create", container, path("a.txt"), "--json"], command: "create", status: 1)

        value = try run(["add", container, path("b.txt"), "--json"], command: "add", status: 0)
        XCTAssertEqual(value["added"] as? [String], ["b.txt"])
        XCTAssertEqual((value["data_files"] as? [[String: Any]])?.map { $0["name"] as? String }, ["a.txt", "b.txt"])
        _ = try run(["add", container, path("b.txt"), "--json"], command: "add", status: 1, code: "refused")
        value = try run(["add", missing, path("a.txt"), "--json"], command: "add", status: 1, code: "not-found")
        XCTAssertEqual(value["container"] as? String, missing)

        value = try run(["ls", container, "--json"], command: "ls", status: 0)
        XCTAssertEqual((value["data_files"] as? [[String: Any]])?.first?["media_type"] as? String, "text/plain")
        _ = try run(["ls", missing, "--json"], command: "ls", status: 1, code: "not-found")
        _ = try run(["ls", broken, "--json"], command: "ls", status: 1, code: "not-a-container")
        _ = try run(["ls", "--json"], command: "ls", status: 2, code: "usage")
        _ = try run(["ls", container, "--bogus", "--json"], command: "ls", status: 2, code: "usage")

        // An unsigned container is not VALID: the report, and an error saying so.
        value = try run(["verify", container, "--json", "-o", "tsl=none"], command: "verify", status: 1, code: "not-valid")
        XCTAssertEqual(value["container"] as? String, container)
        XCTAssertEqual(value["verdict"] as? String, "INDETERMINATE")
        XCTAssertNotNil(value["findings"] as? [Any])
        XCTAssertEqual((value["data_files"] as? [[String: Any]])?.map { $0["name"] as? String }, ["a.txt", "b.txt"])
        _ = try run(["verify", missing, "--json"], command: "verify", status: 1, code: "not-found")
        _ = try run(["verify", broken, "--json"], command: "verify", status: 1, code: "not-a-container")
        _ = try run(["verify", container, "--json", "--warnings=maybe"], command: "verify", status: 2, code: "usage")

        value = try run(["extract", container, "-d", path("out"), "--json"], command: "extract", status: 0)
        XCTAssertEqual((value["extracted"] as? [[String: String]])?.map { $0["name"] }, ["a.txt", "b.txt"])
        _ = try run(["extract", container, "--stdout", "--json"], command: "extract", status: 2, code: "usage")

        value = try run(["remove", container, "a.txt", "--json"], command: "remove", status: 0)
        XCTAssertEqual(value["removed"] as? [String], ["a.txt"])
        _ = try run(["remove", container, "zzz.txt", "--json"], command: "remove", status: 1, code: "not-found")
        _ = try run(["remove", container, "--signature", "0", "--json"], command: "remove", status: 1, code: "refused")

        // Another program holds the container (as a mount or flock(1) would): busy, try again later.
        let holder = open(container, O_RDONLY)
        XCTAssertEqual(flock(holder, LOCK_EX), 0)
        _ = try run(["add", container, path("a.txt"), "--json"], command: "add", status: 1, code: "busy")
        _ = try run(["remove", container, "b.txt", "--json"], command: "remove", status: 1, code: "busy")
        close(holder)

        _ = try run(["extend", container, "--json", "-o", "tsl=none"], command: "extend", status: 1)
        // sign prints JSON Lines; a failure before it starts is its one result line.
        value = try run(["sign", container, "--json"], command: "sign", status: 2, code: "usage")
        XCTAssertEqual(value["event"] as? String, "result")
        _ = try run(["sign", container, "--method", "pkcs13", "--json"], command: "sign", status: 2, code: "usage")
    }

    /// The commands without a container: the same envelope, named with their subcommand, and
    /// no `container` key.
    func testCommandsWithoutAContainerPrintTheEnvelopeOnFailure() throws {
        var value = try run(["tokens", "module=\(path("missing.so"))", "--json"], command: "tokens", status: 1, code: "token")
        XCTAssertNil(value["container"])
        _ = try run(["tokens", "label=x", "--json"], command: "tokens", status: 2, code: "usage")
        value = try run(["card", "status", "bogus=1", "--json"], command: "card status", status: 2, code: "usage")
        XCTAssertNil(value["container"])
        _ = try run(["card", "--json"], command: "card", status: 2, code: "usage")
        // No pcscd at this socket: the card cannot be reached (it printed nothing on stdout before).
        _ = try run(["card", "status", "--json"], command: "card status", status: 1, code: "card",
                    environment: ["PCSCLITE_CSOCK_NAME": path("no-pcscd.socket")])
        _ = try run(["card", "pins", "--json"], command: "card pins", status: 1, code: "card",
                    environment: ["PCSCLITE_CSOCK_NAME": path("no-pcscd.socket")])
        _ = try run(["remote", "credentials", "--json", "-o", "remote.url=https://127.0.0.1:9/csc/v1"], command: "remote credentials",
                    status: try asicfs(["remote", "credentials", "-o", "remote.url=https://127.0.0.1:9/csc/v1"]).status)
        _ = try run(["remote", "credentials", "extra", "--json"], command: "remote credentials", status: 2, code: "usage")
    }

    /// decrypt, encrypt and ls of an encrypted file: the envelope with their own fields, and each
    /// failure's stable code; the schema refuses a decrypt result without its fields.
    func testEncryptionCommandsPrintTheEnvelopeOnSuccessAndFailure() throws {
        let rsa = try CDOCTestKey.make(.rsa, in: work, name: "rsa")
        let other = try CDOCTestKey.make(.p256, in: work, name: "other")
        let file = try write("a.txt", "a")
        var value = try run(["encrypt", path("a.cdoc"), file, "-r", rsa.certificatePath, "--json"], command: "encrypt", status: 0)
        XCTAssertEqual(value["container"] as? String, path("a.cdoc"))
        XCTAssertEqual(value["recipients"] as? Int, 1)
        value = try run(["ls", path("a.cdoc"), "--json"], command: "ls", status: 0)
        XCTAssertEqual(value["encrypted"] as? Bool, true)
        value = try run(["decrypt", path("a.cdoc"), "-d", path("out"), "--method", "key", "key-file=\(rsa.keyPath)", "--json"],
                        command: "decrypt", status: 0)
        XCTAssertEqual(value["format"] as? String, "CDOC 1.1")
        _ = try run(["decrypt", path("a.cdoc"), "-d", path("out2"), "--method", "key", "key-file=\(other.keyPath)", "--json"],
                    command: "decrypt", status: 1, code: "not-a-recipient")
        _ = try run(["decrypt", file, "--method", "key", "key-file=\(rsa.keyPath)", "--json"], command: "decrypt", status: 1, code: "not-a-container")
        _ = try run(["decrypt", path("a.cdoc"), "--method", "nope", "--json"], command: "decrypt", status: 2, code: "usage")
        // id-card with no pcscd to reach: the card's code (it said "unsupported" before the card decrypted).
        _ = try run(["decrypt", path("a.cdoc"), "--method", "id-card", "--json"], command: "decrypt", status: 1, code: "card",
                    environment: ["PCSCLITE_CSOCK_NAME": path("no-pcscd.socket")])
        _ = try run(["encrypt", path("b.cdoc"), file, "-r", other.certificatePath, "--format", "cdoc1.0", "--json"],
                    command: "encrypt", status: 1, code: "unsupported")
        _ = try run(["encrypt", path("a.cdoc"), file, "-r", rsa.certificatePath, "--json"], command: "encrypt", status: 1, code: "refused")
        let incomplete = #"{"format_version": 2, "command": "decrypt", "ok": true, "exit_status": 0, "error": null, "container": "a.cdoc"}"#
        let check = try runTool("/usr/bin/python3", ["-c", """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.loads(sys.argv[2])))
            sys.exit(0 if errors else 1)
            """, Self.jsonSchema, incomplete])
        XCTAssertEqual(check.status, 0, "a decrypt result without format and decrypted passed the schema")
    }

    /// The schema is no blank cheque: an object of the old shape (format_version 1, verify's
    /// `path` and a text `error`) is refused by it.
    func testTheSchemaRefusesTheOldShape() throws {
        let old = #"{"format_version": 1, "path": "x.asice", "error": "no such file"}"#
        let check = try runTool("/usr/bin/python3", ["-c", """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.loads(sys.argv[2])))
            sys.exit(0 if errors else 1)
            """, Self.jsonSchema, old])
        XCTAssertEqual(check.status, 0, "the old shape passed the schema: \(check.stderr)")
    }
}

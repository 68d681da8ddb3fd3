import Crypto
import Foundation
import TestTools
import XCTest

/// The Mobile-ID simulator behaves as spec/mobile-id.md §4-§6 and §14 say the real service does,
/// checked with curl as an independent client (so asicfs's own client is not what is tested here).
final class MobileIDSimulatorTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    nonisolated(unsafe) static var simulator: MobileIDSimulator?
    nonisolated(unsafe) static var simulatorFailure: String?

    override class func setUp() {
        shared = SharedTestServices(label: "mobile-id-simulator")
        guard let services = shared.services else { return }
        do {
            // Short long-polls and session lifetime, so their limits can be seen within seconds.
            simulator = try MobileIDSimulator.start(pki: services.pki, folder: shared.folder + "/mid", extra: [
                "--max-poll-ms", "1500", "--default-poll-ms", "1200", "--session-ttl", "2",
            ])
        } catch {
            simulatorFailure = "\(error)"
        }
    }

    override class func tearDown() {
        simulator?.stop()
        shared.stop()
    }

    var simulator: MobileIDSimulator { get throws { try XCTUnwrap(Self.simulator, Self.simulatorFailure ?? Self.shared.failure ?? "") } }

    struct Reply: Sendable {
        let curlStatus: Int32
        let curlError: String
        let status: Int
        let text: String
        let headers: String
        let seconds: Double
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
        var error: String? { json["error"] as? String }
    }

    func call(_ method: String, _ path: String, _ body: String? = nil) throws -> Reply {
        let reply = try Self.call(method, path, body)
        XCTAssertEqual(reply.curlStatus, 0, reply.curlError)
        return reply
    }

    /// One request with curl, pinned to the simulator's certificate.
    static func call(_ method: String, _ path: String, _ body: String? = nil) throws -> Reply {
        guard let simulator else { throw ShellError(simulatorFailure ?? shared.failure ?? "no simulator") }
        let base = shared.folder + "/curl-\(UUID().uuidString.prefix(8))"
        defer { unlink(base + ".body"); unlink(base + ".headers") }
        var arguments = ["-sS", "--cacert", simulator.tlsCertificate, "-X", method, "-o", base + ".body", "-D", base + ".headers",
                         "-w", "%{http_code} %{time_total}", "--max-time", "10"]
        if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
        let result = try Shell.run("curl", arguments + [simulator.url + path])
        let parts = result.stdout.split(separator: " ")
        return Reply(curlStatus: result.status, curlError: result.stderr, status: Int(parts.first ?? "") ?? 0, text: (try? String(contentsOfFile: base + ".body", encoding: .utf8)) ?? "",
                     headers: (try? String(contentsOfFile: base + ".headers", encoding: .utf8)) ?? "",
                     seconds: Double(parts.last ?? "") ?? 0)
    }

    func json(_ members: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: members, options: [.sortedKeys]), as: UTF8.self)
    }

    let demoParty: [String: Any] = ["relyingPartyUUID": "00000000-0000-0000-0000-000000000000", "relyingPartyName": "DEMO"]

    func person(_ number: (String, String)) -> [String: Any] {
        demoParty.merging(["phoneNumber": number.0, "nationalIdentityNumber": number.1]) { $1 }
    }

    func signing(_ number: (String, String), hash: [UInt8] = Digest.hash(Array("document".utf8), .sha256),
                 hashType: String = "SHA256") -> [String: Any] {
        person(number).merging(["hash": Data(hash).base64EncodedString(), "hashType": hashType, "language": "ENG"]) { $1 }
    }

    func startSession(_ number: (String, String), hash: [UInt8] = Digest.hash(Array("document".utf8), .sha256),
                      hashType: String = "SHA256") throws -> String {
        let reply = try call("POST", "/signature", json(signing(number, hash: hash, hashType: hashType)))
        XCTAssertEqual(reply.status, 200, reply.text)
        return try XCTUnwrap(reply.json["sessionID"] as? String, reply.text)
    }

    /// Every answer, good or bad, carries `time` and `traceId` (service version 5.2.1 on).
    func assertStamped(_ reply: Reply, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNotNil(reply.json["time"] as? String, reply.text, file: file, line: line)
        XCTAssertNotNil((reply.json["traceId"] as? String).flatMap { UInt64($0, radix: 16) }, reply.text, file: file, line: line)
    }

    func testRoutesAndMethods() throws {
        let version = try call("GET", "/version")
        XCTAssertEqual(version.status, 200)
        XCTAssertTrue(version.text.hasPrefix("Version: 5.2.1. Built: "), version.text)
        for (method, path) in [("GET", "/certificate"), ("PUT", "/certificate"), ("DELETE", "/signature"),
                               ("POST", "/signature/session/abc"), ("PATCH", "/authentication/session/abc")] {
            let reply = try call(method, path, method == "POST" ? "{}" : nil)
            XCTAssertEqual(reply.status, 405, "\(method) \(path)")
            XCTAssertEqual(reply.error, "Method Not Allowed")
            assertStamped(reply)
        }
        let options = try call("OPTIONS", "/certificate")
        XCTAssertEqual(options.status, 200)
        XCTAssertTrue(options.headers.contains("Allow: POST, OPTIONS"), options.headers)
        XCTAssertEqual(try call("GET", "/no-such-thing").status, 404)
    }

    func testRequiredFieldsFormsAndRelyingParty() throws {
        let mary = MobileIDSimulator.Number.ecOK
        func expect(_ path: String, _ body: [String: Any], _ status: Int, _ error: String, line: UInt = #line) throws {
            let reply = try call("POST", path, json(body))
            XCTAssertEqual(reply.status, status, reply.text, line: line)
            XCTAssertEqual(reply.error, error, line: line)
            assertStamped(reply, line: line)
        }
        var missingPhone = person(mary)
        missingPhone["phoneNumber"] = nil
        try expect("/certificate", missingPhone, 400, "phoneNumber cannot be null.")
        var missingHash = signing(mary)
        missingHash["hash"] = nil
        try expect("/signature", missingHash, 400, "Required hash is missing.")
        try expect("/signature", signing(mary).merging(["language": NSNull()]) { $1 }, 400, "Required language is missing.")
        try expect("/certificate", person(mary).merging(["relyingPartyUUID": "de435d54--"]) { $1 }, 400, "relyingPartyUUID must be a valid UUID")
        try expect("/certificate", person(mary).merging(["relyingPartyName": String(repeating: "n", count: 110)]) { $1 }, 400,
                   "relyingPartyName must be at most 100 characters")
        try expect("/certificate", person(mary).merging(["relyingPartyUUID": "00000000-0000-0000-0000-000000000001"]) { $1 }, 401,
                   "Failed to authorize user")
        try expect("/signature", signing(mary).merging(["relyingPartyUUID": "5e6f8a10-1b2c-4d3e-8f90-a1b2c3d4e5f6"]) { $1 }, 401,
                   "Failed to authorize user")
        try expect("/certificate", person(mary).merging(["phoneNumber": "37200000766"]) { $1 }, 400,
                   "phoneNumber must contain of + and numbers(8-30)")
        try expect("/certificate", person(mary).merging(["nationalIdentityNumber": "0000"]) { $1 }, 400,
                   "nationalIdentityNumber must contain of 11 digits")
        try expect("/signature", signing(mary).merging(["hash": "not base64!"]) { $1 }, 400, "Hash must be Base64 encoded")
        try expect("/signature", signing(mary, hashType: "SHA384"), 400, "The length of the hash must match the type of hash")
        try expect("/signature", signing(mary).merging(["hashType": "SHA1"]) { $1 }, 400, "hashType must be one of SHA256, SHA384, SHA512")
        try expect("/signature", signing(mary).merging(["language": "FIN"]) { $1 }, 400, "language must be one of EST, ENG, RUS, LIT")
        try expect("/signature", signing(mary).merging(["displayText": String(repeating: "õ", count: 51), "displayTextFormat": "UCS-2"]) { $1 },
                   400, "displayText must not be longer than 50 characters in UCS-2")
        let notJSON = try call("POST", "/certificate", "{\"relyingPartyName\": ")
        XCTAssertEqual(notJSON.status, 400)

        // Unknown members are ignored; the name is case-insensitive; the answer is stamped.
        let reply = try call("POST", "/certificate", json(person(mary).merging(["relyingPartyName": "demo", "futureMember": 1]) { $1 }))
        XCTAssertEqual(reply.status, 200, reply.text)
        XCTAssertEqual(reply.json["result"] as? String, "OK")
        assertStamped(reply)
    }

    /// The demo numbers of §11 end as the demo service does; OK values verify with the certificate.
    func testDemoNumbersEndAsTheSpecSays() throws {
        let number = MobileIDSimulator.Number.self
        let notFound = try call("POST", "/certificate", json(person(number.notMIDClient)))
        XCTAssertEqual(notFound.json["result"] as? String, "NOT_FOUND")
        XCTAssertEqual(notFound.json["cert"] as? String, "")
        assertStamped(notFound)

        let expected: [((String, String), String)] = [
            (number.notMIDClient, "NOT_MID_CLIENT"), (("+37200000366", "60001019928"), "NOT_MID_CLIENT"),
            (("+37200000001", "38001019015"), "NOT_MID_CLIENT"),
            (number.deliveryError, "DELIVERY_ERROR"), (number.userCancelled, "USER_CANCELLED"),
            (number.hashMismatch, "SIGNATURE_HASH_MISMATCH"), (number.simError, "SIM_ERROR"),
            (number.phoneAbsent, "PHONE_ABSENT"), (number.timeout, "TIMEOUT"), (("+37266000266", "50001018908"), "TIMEOUT"),
        ]
        let sessions = try expected.map { try startSession($0.0) }
        for (session, (phone, result)) in zip(sessions, expected) {
            let reply = try call("GET", "/signature/session/\(session)?timeoutMs=1500")
            XCTAssertEqual(reply.status, 200)
            XCTAssertEqual(reply.json["state"] as? String, "COMPLETE", "\(phone): \(reply.text)")
            XCTAssertEqual(reply.json["result"] as? String, result, "\(phone)")
            XCTAssertNil(reply.json["signature"])
            assertStamped(reply)
        }

        let signers: [((String, String), DigestAlgorithm, String, SignatureAlgorithm)] = [
            (number.ecOK, .sha256, "SHA256WithECEncryption", SignatureAlgorithm(.ecdsa, .sha256)),
            (number.ecOK, .sha512, "SHA512WithECEncryption", SignatureAlgorithm(.ecdsa, .sha512)),
            (number.rsaOK, .sha256, "SHA256WithRSAEncryption", SignatureAlgorithm(.rsaPKCS1, .sha256)),
            (number.rsaOK, .sha384, "SHA384WithRSAEncryption", SignatureAlgorithm(.rsaPKCS1, .sha384)),
            (number.lithuanianOK, .sha384, "SHA384WithECEncryption", SignatureAlgorithm(.ecdsa, .sha384)),
            (("+37200000566", "60001018800"), .sha256, "SHA256WithECEncryption", SignatureAlgorithm(.ecdsa, .sha256)),
        ]
        for (phone, digest, name, algorithm) in signers {
            let certificateReply = try call("POST", "/certificate", json(person(phone)))
            let der = try XCTUnwrap(Data(base64Encoded: certificateReply.json["cert"] as? String ?? ""), certificateReply.text)
            let certificate = try Certificate(der: Array(der))
            XCTAssertEqual(certificate.serialNumberAttribute, (phone.0.hasPrefix("+370") ? "PNOLT-" : "PNOEE-") + phone.1)
            XCTAssertEqual(certificate.issuerCommonName, "TEST of ESTEID-LIKE 2025")
            let hash = Digest.hash(Array("document \(name)".utf8), digest)
            let session = try startSession(phone, hash: hash, hashType: digest.rawValue.replacingOccurrences(of: "-", with: ""))
            let reply = try call("GET", "/signature/session/\(session)?timeoutMs=1500")
            XCTAssertEqual(reply.json["result"] as? String, "OK", reply.text)
            let signature = try XCTUnwrap(reply.json["signature"] as? [String: Any], reply.text)
            XCTAssertEqual(signature["algorithm"] as? String, name)
            let value = try XCTUnwrap(Data(base64Encoded: signature["value"] as? String ?? ""))
            if algorithm.scheme == .ecdsa {
                XCTAssertEqual(value.count, 2 * ((try XCTUnwrap(certificate.publicKey).bits + 7) / 8), "raw r||s, not DER")
            }
            XCTAssertTrue(try XCTUnwrap(certificate.publicKey).verify(signature: Array(value), digest: hash, algorithm: algorithm), name)
        }

        // Test-only behaviours: HTTP 500 at the start, unreadable JSON at the end.
        let failing = try call("POST", "/signature", json(signing(number.internalError)))
        XCTAssertEqual(failing.status, 500)
        XCTAssertEqual(failing.error, "Internal error")
        let malformed = try call("GET", "/signature/session/\(try startSession(number.malformedJSON))?timeoutMs=1500")
        XCTAssertEqual(malformed.status, 200)
        XCTAssertNil(try? JSONSerialization.jsonObject(with: Data(malformed.text.utf8)), malformed.text)
    }

    func testLongPollsAreClampedAndEndEarly() throws {
        // (A new session each time: they live 2 s here.)
        for (query, least, most) in [("?timeoutMs=10", 0.95, 1.45), ("", 1.15, 1.65), ("?timeoutMs=60000", 1.45, 1.95)] {
            let running = try startSession(MobileIDSimulator.Number.runsForever)
            let reply = try call("GET", "/signature/session/\(running)\(query)")
            XCTAssertEqual(reply.json["state"] as? String, "RUNNING", reply.text)
            XCTAssertNil(reply.json["result"])
            assertStamped(reply)
            XCTAssertGreaterThan(reply.seconds, least, "'\(query)' waited \(reply.seconds) s")
            XCTAssertLessThan(reply.seconds, most, "'\(query)' waited \(reply.seconds) s")
        }
        XCTAssertEqual(try call("GET", "/signature/session/\(try startSession(MobileIDSimulator.Number.runsForever))?timeoutMs=soon").status, 400)

        // A state change ends the wait at once.
        let completing = try startSession(MobileIDSimulator.Number.ecOK)
        let done = try call("GET", "/signature/session/\(completing)?timeoutMs=60000")
        XCTAssertEqual(done.json["state"] as? String, "COMPLETE")
        XCTAssertLessThan(done.seconds, 1.0)

        // A second poll of the same session releases the first one with RUNNING.
        let running = try startSession(MobileIDSimulator.Number.runsForever)
        final class Slot: @unchecked Sendable { var reply: Reply? }  // written before `finished` is signalled
        let first = Slot()
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            first.reply = try? Self.call("GET", "/signature/session/\(running)?timeoutMs=60000")
            finished.signal()
        }
        Thread.sleep(forTimeInterval: 0.4)
        let second = try call("GET", "/signature/session/\(running)?timeoutMs=60000")
        finished.wait()
        let released = try XCTUnwrap(first.reply)
        XCTAssertEqual(released.json["state"] as? String, "RUNNING")
        XCTAssertLessThan(released.seconds, 1.1, "released by the second poll, not by its own 1.5 s")
        XCTAssertEqual(second.json["state"] as? String, "RUNNING")
        XCTAssertGreaterThan(second.seconds, 1.4)
    }

    func testSessionsAreForgottenAfterTheirLifetime() throws {
        let missing = try call("GET", "/signature/session/0b0e7e55-0000-4000-8000-000000000000")
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.error, "SessionID not found")
        assertStamped(missing)
        let empty = try call("GET", "/signature/session/")
        XCTAssertEqual(empty.status, 400)
        XCTAssertEqual(empty.error, "Required sessionId is missing")

        let session = try startSession(MobileIDSimulator.Number.ecOK)
        XCTAssertEqual(try call("GET", "/signature/session/\(session)?timeoutMs=1000").json["result"] as? String, "OK")
        XCTAssertEqual(try call("GET", "/authentication/session/\(session)").status, 404, "a signing session is no authentication")
        Thread.sleep(forTimeInterval: 2.1)
        let expired = try call("GET", "/signature/session/\(session)")
        XCTAssertEqual(expired.status, 404)
        XCTAssertEqual(expired.error, "SessionID not found")
    }

    func testAuthenticationReturnsTheCertificate() throws {
        let reply = try call("POST", "/authentication", json(signing(MobileIDSimulator.Number.ecOK)))
        let session = try XCTUnwrap(reply.json["sessionID"] as? String, reply.text)
        let status = try call("GET", "/authentication/session/\(session)?timeoutMs=1500")
        XCTAssertEqual(status.json["result"] as? String, "OK", status.text)
        XCTAssertNotNil(status.json["cert"] as? String)
        XCTAssertEqual((status.json["signature"] as? [String: Any])?["algorithm"] as? String, "SHA256WithECEncryption")
    }
}

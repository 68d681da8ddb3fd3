import Crypto
import Foundation
import HTTP
@testable import Signing
import TestTools
import XCTest

/// The simulator keeps the rules of RP API v2 that asicfs relies on (the protocol notes' §14),
/// asked directly over the same pinned JSON client the signer uses.
final class SmartIDServiceTests: SmartIDTestCase {
    let relyingParty: [String: Any] = ["relyingPartyUUID": "00000000-0000-4000-8000-000000000000", "relyingPartyName": "DEMO"]

    func service() throws -> JSONService {
        let context = SignerContext(environment: try environment(), cancellation: Cancellation())
        let url = JSONService.baseURL(prefix: "smart-id", productionURL: "", demoURL: "", configuration: context.configuration)
        return try JSONService(name: "Smart-ID", prefix: "smart-id", url: url, context: context)
    }

    func body(_ extra: [String: Any]) -> [String: Any] { relyingParty.merging(extra) { $1 } }

    var signatureMembers: [String: Any] {
        ["hash": Data(Digest.hash(Array("x".utf8))).base64EncodedString(), "hashType": "SHA256",
         "allowedInteractionsOrder": [["type": "displayTextAndPIN", "displayText60": "Sign"]]]
    }

    func testAnIdenticalRequestWithin15SecondsGetsTheSameSession() throws {
        let service = try service()
        let path = "/certificatechoice/etsi/PNOEE-30303039914"
        let first = try service.post(path, body(["certificateLevel": "QUALIFIED"]))
        let again = try service.post(path, body(["certificateLevel": "QUALIFIED"]))
        XCTAssertEqual(first.status, 200)
        XCTAssertNotNil(first.json["sessionID"] as? String)
        XCTAssertEqual(first.json["sessionID"] as? String, again.json["sessionID"] as? String)
        let withNonce = try service.post(path, body(["certificateLevel": "QUALIFIED", "nonce": "a"]))
        let otherNonce = try service.post(path, body(["certificateLevel": "QUALIFIED", "nonce": "b"]))
        XCTAssertNotEqual(withNonce.json["sessionID"] as? String, first.json["sessionID"] as? String)
        XCTAssertNotEqual(withNonce.json["sessionID"] as? String, otherNonce.json["sessionID"] as? String)
    }

    func testRequestsAreCheckedAsTheServiceChecksThem() throws {
        let service = try service()
        let person = "/certificatechoice/etsi/PNOEE-30303039914"
        let signature = "/signature/document/PNOEE-30303039914-MOCK-Q"
        var long = signatureMembers
        long["allowedInteractionsOrder"] = [["type": "displayTextAndPIN", "displayText60": String(repeating: "x", count: 61)]]
        var bothTexts = signatureMembers
        bothTexts["allowedInteractionsOrder"] = [["type": "displayTextAndPIN", "displayText60": "a", "displayText200": "b"]]
        var shortHash = signatureMembers
        shortHash["hashType"] = "SHA512"
        let cases: [(String, [String: Any], Int)] = [
            (person, ["relyingPartyUUID": "00000000-0000-0000-0000-000000000000", "relyingPartyName": "DEMO"], 401),
            (person, ["relyingPartyUUID": relyingParty["relyingPartyUUID"]!, "relyingPartyName": "other"], 401),
            (person, ["relyingPartyUUID": relyingParty["relyingPartyUUID"]!, "relyingPartyName": String(repeating: "D", count: 33)], 400),
            (person, ["relyingPartyName": "DEMO"], 400),
            (person, body(["certificateLevel": "ADVANCED"]), 403),
            (person, body(["certificateLevel": "BEST"]), 400),
            (person, body(["nonce": String(repeating: "n", count: 31)]), 400),
            (person, body(["capabilities": ["ADVANCED"]]), 403),
            ("/certificatechoice/etsi/PNOEE-50001010192", relyingParty, 404),
            ("/certificatechoice/document/PNOEE-30303039914-NONE-Q", relyingParty, 404),
            (signature, relyingParty, 400),
            (signature, body(long), 400),
            (signature, body(bothTexts), 400),
            (signature, body(shortHash), 400),
            (signature, body(signatureMembers), 200),
        ]
        for (path, request, status) in cases {
            XCTAssertEqual(try service.post(path, request).status, status, "\(path) \(request)")
        }
    }

    func testLongPollsAreClampedAndUnknownSessionsAre404() throws {
        let service = try service()
        let created = try service.post("/signature/document/PNOEE-50001010115-TEST-Q", body(signatureMembers))
        let sessionID = try XCTUnwrap(created.json["sessionID"] as? String)
        let started = Date()
        let running = try service.get("/session/\(sessionID)?timeoutMs=10")
        XCTAssertEqual(running.json["state"] as? String, "RUNNING")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.95, "timeoutMs is raised to 1000")
        XCTAssertEqual(try service.get("/session/\(UUID().uuidString.lowercased())?timeoutMs=1000").status, 404)
        XCTAssertEqual(try service.get("/session/\(sessionID)?timeoutMs=soon").status, 400)
    }
}

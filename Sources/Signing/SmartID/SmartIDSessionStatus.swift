import Foundation

/// The answer of `GET /session/{id}` (RP API v2). Every member is optional here so that a
/// missing one can be named in the error; members the protocol adds later are ignored.
struct SmartIDSessionStatus: Decodable {
    struct Result: Decodable {
        let endResult: String?
        let documentNumber: String?
    }

    struct Signature: Decodable {
        let value: String?
        let algorithm: String?
    }

    struct Certificate: Decodable {
        let value: String?
        let certificateLevel: String?
    }

    let state: String?
    let result: Result?
    let signature: Signature?
    let cert: Certificate?
    let interactionFlowUsed: String?

    /// Reads the answer's body, or says in one sentence why it is not a session status.
    static func decode(_ body: [UInt8]) throws -> SmartIDSessionStatus {
        guard (try? JSONSerialization.jsonObject(with: Data(body))) is [String: Any] else {
            throw SigningError("Smart-ID: the service's answer about the session is not JSON")
        }
        do {
            return try JSONDecoder().decode(SmartIDSessionStatus.self, from: Data(body))
        } catch {
            throw SigningError("Smart-ID: the service's answer about the session is not what RP API v2 describes "
                + "(a member has the wrong type)")
        }
    }
}


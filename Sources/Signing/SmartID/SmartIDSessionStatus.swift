import Foundation

/// The answer of `GET /session/{id}` (RP API v2 and v3). Every member is optional here so that a
/// missing one can be named in the error; members the protocol adds later are ignored.
struct SmartIDSessionStatus: Decodable {
    struct Result: Decodable {
        let endResult: String?
        let documentNumber: String?
        /// v3 `USER_REFUSED_INTERACTION`: the screen that was cancelled.
        let details: Details?
    }

    struct Details: Decodable {
        let interaction: String?
    }

    struct Signature: Decodable {
        let value: String?
        /// v2's name of the algorithm; v3 says `signatureAlgorithm` (+ parameters for RSASSA-PSS).
        let algorithm: String?
        let signatureAlgorithm: String?
        let signatureAlgorithmParameters: PSSParameters?
        /// v3: QR, Web2App, App2App or Notification.
        let flowType: String?
    }

    /// v3's RSASSA-PSS parameters in a session status.
    struct PSSParameters: Decodable {
        struct MaskGeneration: Decodable {
            struct Parameters: Decodable { let hashAlgorithm: String? }
            let algorithm: String?
            let parameters: Parameters?
        }
        let hashAlgorithm: String?
        let maskGenAlgorithm: MaskGeneration?
        let saltLength: Int?
        let trailerField: String?
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
    /// v3: RAW_DIGEST_SIGNATURE on a signature.
    let signatureProtocol: String?

    /// Reads the answer's body, or says in one sentence why it is not a session status.
    static func decode(_ body: [UInt8]) throws -> SmartIDSessionStatus {
        guard (try? JSONSerialization.jsonObject(with: Data(body))) is [String: Any] else {
            throw SigningError("Smart-ID: the service's answer about the session is not JSON")
        }
        do {
            return try JSONDecoder().decode(SmartIDSessionStatus.self, from: Data(body))
        } catch {
            throw SigningError("Smart-ID: the service's answer about the session is not what the RP API describes "
                + "(a member has the wrong type)")
        }
    }
}


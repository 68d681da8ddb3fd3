import Crypto
import Foundation
import HTTP

/// The MID-REST calls a signing makes (certificate, signature, long-polled session status) over
/// a pinned JSON service, with the relying party and the overall wait from the configuration.
public struct MobileIDClient: Sendable {
    public static let productionURL = "https://mid.sk.ee/mid-api"
    /// SK's demo service (`demo = yes` or `tsl = test`), with the demo relying party below.
    public static let demoURL = "https://tsp.demo.sk.ee/mid-api"
    public static let demoRelyingPartyUUID = "00000000-0000-0000-0000-000000000000"
    public static let demoRelyingPartyName = "DEMO"
    public static let defaultTimeout = 150.0
    /// The longest single long poll; the spec suggests 10-60 s.
    static let longestPoll = 30.0
    /// The client's HTTP timeout exceeds the poll's wait by this much (spec: about 1.5 s).
    static let pollSlack = 1.5

    let service: JSONService
    let relyingPartyName: String
    let relyingPartyUUID: String
    /// Seconds the user has to confirm (`mobile-id.timeout`), from the signing request on.
    public let timeout: Double
    let cancellation: Cancellation

    /// Reads `mobile-id.url`, `.relying-party-uuid`, `.relying-party-name`, `.tls-cert`, `.timeout`
    /// and `proxy`; contacts nothing yet.
    public init(context: SignerContext) throws {
        let configuration = context.configuration
        let url = JSONService.baseURL(prefix: "mobile-id", productionURL: Self.productionURL, demoURL: Self.demoURL,
                                      configuration: configuration)
        let uuid = configuration["mobile-id.relying-party-uuid"], name = configuration["mobile-id.relying-party-name"]
        if JSONService.isSKProduction(url) && (uuid == nil || name == nil) {
            throw SigningError("Mobile-ID in production needs your own relying party, agreed with SK ID Solutions: set "
                + "mobile-id.relying-party-uuid and mobile-id.relying-party-name (for SK's demo service: demo = yes, or tsl = test)")
        }
        relyingPartyUUID = uuid ?? Self.demoRelyingPartyUUID
        relyingPartyName = name ?? Self.demoRelyingPartyName
        guard Self.isLowerCaseUUID(relyingPartyUUID) else {
            throw SigningError("mobile-id.relying-party-uuid must be a UUID in lower case (8-4-4-4-12 hex digits), "
                + "not '\(MobileIDFailure.printable(relyingPartyUUID))'")
        }
        guard !relyingPartyName.isEmpty, relyingPartyName.count <= 100 else {
            throw SigningError("mobile-id.relying-party-name must be 1 to 100 characters (the name agreed with SK)")
        }
        if let text = configuration["mobile-id.timeout"] {
            guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
                throw SigningError("mobile-id.timeout must be a positive number of seconds, not '\(text)'")
            }
            timeout = seconds
        } else {
            timeout = Self.defaultTimeout
        }
        cancellation = context.cancellation
        service = try JSONService(name: "Mobile-ID", prefix: "mobile-id", url: url, context: context)
    }

    /// The person's signing certificate (`POST /certificate`).
    public func certificate(phone: String, personalCode: String) throws -> Certificate {
        let answer = try service.post("/certificate", relyingParty.merging([
            "phoneNumber": phone, "nationalIdentityNumber": personalCode,
        ]) { $1 })
        guard answer.status == 200 else { throw MobileIDFailure.http(answer, call: .certificate, url: service.baseURL) }
        switch try MobileIDCertificateAnswer(answer).result {
        case .found(let certificate): return certificate
        case .notFound: throw MobileIDFailure.notAUser(phone: phone)
        }
    }

    /// Starts a signing session for `hash` (`POST /signature`) and returns its id. The phone shows
    /// the relying party's name, `displayText` and the verification code.
    public func startSigning(_ parameters: MobileIDParameters, hash: [UInt8], hashType: String, deadline: Date) throws -> String {
        var body = relyingParty.merging([
            "phoneNumber": parameters.phone, "nationalIdentityNumber": parameters.personalCode,
            "hash": Data(hash).base64EncodedString(), "hashType": hashType, "language": parameters.language.rawValue,
        ]) { $1 }
        if let text = parameters.displayText {
            body["displayText"] = text.text
            body["displayTextFormat"] = text.format.rawValue
        }
        let answer = try service.post("/signature", body, timeout: min(30, max(deadline.timeIntervalSinceNow, 1) + Self.pollSlack))
        guard answer.status == 200 else { throw MobileIDFailure.http(answer, call: .signature, url: service.baseURL) }
        return try MobileIDSessionStart(answer).sessionID
    }

    /// Long-polls the session, one request at a time, until it completes or `deadline` passes.
    /// Returns the signature on OK; every other end is a `SigningError` with its sentence.
    public func waitForSignature(sessionID: String, deadline: Date) throws -> MobileIDSignature {
        while true {
            if cancellation.isCancelled { throw MobileIDFailure.cancelled }
            let remaining = deadline.timeIntervalSinceNow
            // Under a quarter second left: the server would hold the poll at least a second anyway.
            guard remaining > 0.25 else { throw MobileIDFailure.userDidNotConfirm(within: timeout) }
            let wait = min(Self.longestPoll, max(1, remaining))
            let httpTimeout = min(wait + 5, max(remaining, 1) + Self.pollSlack)
            let answer: JSONService.Answer
            do {
                answer = try service.get("/signature/session/\(sessionID)?timeoutMs=\(Int(wait * 1000))", timeout: httpTimeout)
            } catch {
                if cancellation.isCancelled { throw MobileIDFailure.cancelled }
                if Date() >= deadline { throw MobileIDFailure.noAnswer(within: timeout) }
                throw error
            }
            guard answer.status == 200 else { throw MobileIDFailure.http(answer, call: .session, url: service.baseURL) }
            switch try MobileIDSessionStatus(answer) {
            case .running:
                continue
            case .complete(let result, let signature?) where result == "OK":
                return signature
            case .complete(let result, _):
                throw MobileIDFailure.result(result)
            }
        }
    }

    var relyingParty: [String: Any] {
        ["relyingPartyName": relyingPartyName, "relyingPartyUUID": relyingPartyUUID]
    }

    static func isLowerCaseUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12]
            && groups.allSatisfy { $0.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) } }
    }
}

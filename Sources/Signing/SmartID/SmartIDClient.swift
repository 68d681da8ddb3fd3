import Foundation
import HTTP

/// The calls of Smart-ID's RP API that signing needs, over pinned HTTPS (`JSONService`):
/// start a certificate choice or a signature session, then long-poll it until it ends. The v2
/// requests are here; the v3 ones in SmartIDClient+V3.swift.
struct SmartIDClient: Sendable {
    static let productionURL = "https://rp-api.smart-id.com/v2"
    /// SK's demo service (`demo = yes` or `tsl = test`), with the demo relying party below.
    static let demoURL = "https://sid.demo.sk.ee/smart-id-rp/v2"
    static let productionURLv3 = "https://rp-api.smart-id.com/v3"
    static let demoURLv3 = "https://sid.demo.sk.ee/smart-id-rp/v3"
    /// The DEMO relying party: this UUID is the one SK's documentation gives since 2025-05-19
    /// (the all-zero one came before it).
    static let demoRelyingPartyUUID = "00000000-0000-4000-8000-000000000000"
    static let demoRelyingPartyName = "DEMO"
    static let defaultTimeout: Double = 180
    /// The longest single long poll: the service allows 120 s, but proxies often drop idle
    /// connections sooner, and a shorter poll costs only one more request.
    static let longestPoll: Double = 30

    let service: JSONService
    let relyingPartyUUID: String
    let relyingPartyName: String
    /// How long one session (a certificate choice, a signature) may take, in seconds.
    let timeout: Double
    let cancellation: Cancellation
    let api: SmartIDAPI
    /// v3: the `schemeName` that goes into device links' authCode (`smart-id` on SK's production
    /// service, else `smart-id-demo`; `smart-id.scheme-name` overrides).
    let schemeName: String

    /// Reads `smart-id.url`, `.relying-party-uuid`, `.relying-party-name`, `.tls-cert` and
    /// `.timeout`; refuses settings the service would refuse anyway, before anything is sent.
    init(context: SignerContext) throws {
        let configuration = context.configuration
        api = try SmartIDAPI(configuration)
        let url = JSONService.baseURL(prefix: "smart-id", productionURL: api == .v2 ? Self.productionURL : Self.productionURLv3,
                                      demoURL: api == .v2 ? Self.demoURL : Self.demoURLv3, configuration: configuration)
        schemeName = configuration["smart-id.scheme-name"] ?? (JSONService.isSKProduction(url) ? "smart-id" : "smart-id-demo")
        if JSONService.isSKProduction(url) && (configuration["smart-id.relying-party-uuid"] == nil || configuration["smart-id.relying-party-name"] == nil) {
            throw SigningError("Smart-ID in production needs your own relying party, agreed with SK ID Solutions: set "
                + "smart-id.relying-party-uuid and smart-id.relying-party-name (for SK's demo service: demo = yes, or tsl = test)")
        }
        relyingPartyUUID = configuration["smart-id.relying-party-uuid"] ?? Self.demoRelyingPartyUUID
        guard UUID(uuidString: relyingPartyUUID) != nil else {
            throw SigningError("smart-id.relying-party-uuid must be a UUID like \(Self.demoRelyingPartyUUID), not '\(relyingPartyUUID)'")
        }
        relyingPartyName = configuration["smart-id.relying-party-name"] ?? Self.demoRelyingPartyName
        guard !relyingPartyName.isEmpty, relyingPartyName.utf8.count <= 32 else {
            throw SigningError("smart-id.relying-party-name must be 1 to 32 bytes long (it is \(relyingPartyName.utf8.count))")
        }
        let timeoutText = configuration["smart-id.timeout"]
        let timeout = timeoutText.map { Double($0) ?? .nan } ?? Self.defaultTimeout
        guard timeout.isFinite, timeout >= 1 else {
            throw SigningError("smart-id.timeout must be a number of seconds, at least 1, not '\(timeoutText ?? "")'")
        }
        self.timeout = timeout
        cancellation = context.cancellation
        service = try JSONService(name: "Smart-ID", prefix: "smart-id", url: url, context: context)
    }

    /// `POST /certificatechoice/…` at QUALIFIED level; the random nonce keeps a quick second
    /// signing from getting the first one's session back (the service's 15 s idempotency).
    func startCertificateChoice(for account: SmartIDAccount) throws -> String {
        var body = relyingParty
        body["certificateLevel"] = "QUALIFIED"
        body["nonce"] = Self.nonce()
        return try startSession("/certificatechoice/" + account.pathSuffix, body)
    }

    /// `POST /signature/document/{documentNumber}`: signing by document number makes the
    /// signature come from the key of the certificate already chosen.
    func startSignature(document: String, hash: [UInt8], hashType: String, interactions: [[String: String]]) throws -> String {
        var body = relyingParty
        body["certificateLevel"] = "QUALIFIED"
        body["hash"] = Data(hash).base64EncodedString()
        body["hashType"] = hashType
        body["allowedInteractionsOrder"] = interactions
        return try startSession("/signature/document/" + document, body)
    }

    /// Long-polls the session until it completes and returns it if its result is OK; any other
    /// end is thrown as its sentence. One poll at a time, each at most the time left.
    /// `longestPoll` shortens each poll (a QR code is redrawn between polls) and `tick` runs before each.
    func waitForSuccess(of sessionID: String, longestPoll: Double = Self.longestPoll,
                        tick: () throws -> Void = {}) throws -> SmartIDSessionStatus {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if cancellation.isCancelled { throw SigningError("the signing was cancelled; the container is unchanged") }
            try tick()
            let remaining = deadline.timeIntervalSinceNow
            // The service waits at least 1 s per poll; less time than that left means we are done.
            guard remaining >= 1 else {
                throw SigningError("Smart-ID: the user did not confirm within \(Self.seconds(timeout)) s")
            }
            let pollMilliseconds = Int(min(remaining, longestPoll) * 1000)
            let answer = try service.get("/session/\(sessionID)?timeoutMs=\(pollMilliseconds)",
                                         timeout: Double(pollMilliseconds) / 1000 + 5)
            guard answer.status == 200 else { throw SmartIDFailure.status(answer.status, creating: false) }
            let status = try SmartIDSessionStatus.decode(answer.body)
            switch try SmartIDFailure.required(status.state, "state") {
            case "RUNNING": continue
            case "COMPLETE":
                let endResult = try SmartIDFailure.required(status.result?.endResult, "result.endResult")
                guard endResult.uppercased() == "OK" else {
                    throw api == .v2 ? SmartIDFailure.endResult(endResult)
                        : SmartIDFailure.endResultV3(endResult, interaction: status.result?.details?.interaction)
                }
                return status
            case let state:
                throw SigningError("Smart-ID: the session is in a state asicfs does not know ('\(SmartIDFailure.printable(state))')")
            }
        }
    }

    var relyingParty: [String: Any] {
        ["relyingPartyUUID": relyingPartyUUID, "relyingPartyName": relyingPartyName]
    }

    func startSession(_ path: String, _ body: [String: Any]) throws -> String {
        try startSessionAnswer(path, body).sessionID
    }

    /// The new session's ID and the whole answer (v3 adds the code, or the device link's parts).
    func startSessionAnswer(_ path: String, _ body: [String: Any]) throws -> (sessionID: String, json: [String: Any]) {
        let answer = try service.post(path, body, timeout: 30)
        guard answer.status == 200 else { throw SmartIDFailure.status(answer.status, creating: true) }
        guard (try? JSONSerialization.jsonObject(with: Data(answer.body))) is [String: Any] else {
            throw SigningError("Smart-ID: the service's answer to a new session is not JSON")
        }
        let sessionID = try SmartIDFailure.required(answer.json["sessionID"] as? String, "sessionID")
        // It goes into the next URL's path: only a UUID may.
        guard UUID(uuidString: sessionID) != nil else {
            throw SigningError("Smart-ID: the service's sessionID is not a UUID ('\(SmartIDFailure.printable(sessionID))')")
        }
        return (sessionID, answer.json)
    }

    /// 30 random letters and digits, the longest nonce the service takes.
    static func nonce() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<30).map { _ in alphabet.randomElement()! })
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

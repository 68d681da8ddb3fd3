import Configuration

/// Which Smart-ID RP API asicfs speaks: `smart-id.api = v2|v3`. v3 unless the configuration says
/// v2, or keeps an older setup's `smart-id.url` that ends in /v2 (that configuration predates v3).
public enum SmartIDAPI: String, Sendable {
    case v2, v3

    public init(_ configuration: Configuration) throws {
        if let text = configuration["smart-id.api"] {
            guard let api = SmartIDAPI(rawValue: text) else {
                throw SigningError("smart-id.api must be v2 or v3, not '\(text)'")
            }
            self = api
            return
        }
        var url = configuration["smart-id.url"] ?? ""
        while url.hasSuffix("/") { url.removeLast() }
        self = url.hasSuffix("/v2") ? .v2 : .v3
    }
}

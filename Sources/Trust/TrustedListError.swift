/// Why a trusted list (or the trust set-up) could not be used, as one sentence.
public struct TrustedListError: Error, CustomStringConvertible, Equatable, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// How a signature value is made: the key's scheme and the hash it signs.
public struct SignatureAlgorithm: Sendable, Equatable, CustomStringConvertible {
    public enum Scheme: String, Sendable { case rsaPKCS1 = "RSA", rsaPSS = "RSA-PSS", ecdsa = "ECDSA" }
    public let scheme: Scheme
    public let digest: DigestAlgorithm

    public init(_ scheme: Scheme, _ digest: DigestAlgorithm) {
        self.scheme = scheme
        self.digest = digest
    }

    public var description: String { "\(scheme.rawValue) with \(digest.rawValue)" }
}

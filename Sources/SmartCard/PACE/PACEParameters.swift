import Crypto

/// What a PACE run uses: the protocol, the curve, and the parameter ID (named in MSE:SET AT only
/// when EF.CardAccess named it).
public struct PACEParameters: Sendable, Equatable {
    public let algorithm: PACEAlgorithm
    public let curve: EllipticCurve
    /// The standardized domain parameter ID EF.CardAccess gave; nil when it gave none.
    public let parameterID: Int?

    /// IDEMIA cards give no parameter ID and use P-256 (spec §6.1, after [A]).
    public static let defaultParameterID = 12

    public init(algorithm: PACEAlgorithm, parameterID: Int?) throws {
        guard let curve = Self.curve(forParameterID: parameterID ?? Self.defaultParameterID) else {
            throw PACEError.unsupported("standardized domain parameters \(parameterID ?? Self.defaultParameterID)")
        }
        self.algorithm = algorithm
        self.curve = curve
        self.parameterID = parameterID
    }

    /// BSI TR-03110-3 table of standardized domain parameters (the elliptic curves only;
    /// 0–2 are MODP groups, 8–11 and 14 are curves the ID-card does not use).
    static func curve(forParameterID id: Int) -> EllipticCurve? {
        switch id {
        case 12: .p256
        case 13: .brainpoolP256r1
        case 15: .p384
        case 16: .brainpoolP384r1
        case 17: .brainpoolP512r1
        case 18: .p521
        default: nil
        }
    }
}

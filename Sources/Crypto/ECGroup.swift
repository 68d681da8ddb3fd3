import COpenSSL

/// The named curves PACE uses on the Estonian ID-card and in the ICAO examples
/// (BSI TR-03110 standardized domain parameters 12, 13, 15–18).
public enum EllipticCurve: String, Sendable, CaseIterable {
    case p256 = "P-256", p384 = "P-384", p521 = "P-521"
    case brainpoolP256r1, brainpoolP384r1, brainpoolP512r1

    var nid: Int32 {
        switch self {
        case .p256: NID_X9_62_prime256v1
        case .p384: NID_secp384r1
        case .p521: NID_secp521r1
        case .brainpoolP256r1: NID_brainpoolP256r1
        case .brainpoolP384r1: NID_brainpoolP384r1
        case .brainpoolP512r1: NID_brainpoolP512r1
        }
    }
}

/// A curve with its generator (OpenSSL EC_GROUP, owned and freed here). PACE's generic mapping
/// makes a second group on the same curve whose generator is the mapped point G'.
public final class ECGroup {
    let group: OpaquePointer
    public let curve: EllipticCurve

    public init(_ curve: EllipticCurve) throws {
        guard let group = EC_GROUP_new_by_curve_name(curve.nid) else {
            throw CryptoError("OpenSSL does not know the curve \(curve.rawValue): \(OpenSSLError.last())")
        }
        self.group = group
        self.curve = curve
    }

    private init(owning group: OpaquePointer, curve: EllipticCurve) {
        self.group = group
        self.curve = curve
    }

    deinit { EC_GROUP_free(group) }

    /// The length in bytes of one coordinate (66 for P-521).
    public var coordinateLength: Int { (Int(EC_GROUP_get_degree(group)) + 7) / 8 }

    /// The same curve, order and cofactor with `generator` as its base point (PACE GM's G').
    public func withGenerator(_ generator: ECPoint) throws -> ECGroup {
        guard generator.group.curve == curve else { throw CryptoError("the generator lies on another curve") }
        guard !generator.isAtInfinity else { throw CryptoError("the point at infinity cannot be a generator") }
        guard let copy = EC_GROUP_dup(group) else { throw CryptoError("out of memory") }
        let mapped = ECGroup(owning: copy, curve: curve)
        guard EC_GROUP_set_generator(copy, generator.point, EC_GROUP_get0_order(group), EC_GROUP_get0_cofactor(group)) == 1 else {
            throw CryptoError("cannot set the generator: \(OpenSSLError.last())")
        }
        return mapped
    }

    /// The group order: private scalars are drawn below it.
    var order: OpaquePointer { EC_GROUP_get0_order(group) }
}

import COpenSSL

/// A point on an `ECGroup` (OpenSSL EC_POINT, owned and freed here). Points read from outside
/// are checked: on the curve, not the point at infinity.
public final class ECPoint: Equatable {
    let point: OpaquePointer
    /// Kept so the group outlives the point.
    public let group: ECGroup

    private init(owning point: OpaquePointer, group: ECGroup) {
        self.point = point
        self.group = group
    }

    deinit { EC_POINT_clear_free(point) }

    private static func new(on group: ECGroup) throws -> ECPoint {
        guard let point = EC_POINT_new(group.group) else { throw CryptoError("out of memory") }
        return ECPoint(owning: point, group: group)
    }

    /// Reads `04 ‖ X ‖ Y` (each coordinate the curve's length); anything else, a point off the
    /// curve, or infinity is refused.
    public convenience init(uncompressed bytes: [UInt8], on group: ECGroup) throws {
        let length = group.coordinateLength
        guard bytes.count == 1 + 2 * length, bytes.first == 0x04 else {
            throw CryptoError("an uncompressed \(group.curve.rawValue) point is 04 and \(2 * length) bytes")
        }
        guard let point = EC_POINT_new(group.group) else { throw CryptoError("out of memory") }
        self.init(owning: point, group: group)
        guard EC_POINT_oct2point(group.group, point, bytes, bytes.count, nil) == 1 else {
            ERR_clear_error()
            throw CryptoError("the point is not on \(group.curve.rawValue)")
        }
        guard EC_POINT_is_on_curve(group.group, point, nil) == 1, !isAtInfinity else {
            throw CryptoError("the point is not on \(group.curve.rawValue)")
        }
    }

    public var isAtInfinity: Bool { EC_POINT_is_at_infinity(group.group, point) == 1 }

    /// `04 ‖ X ‖ Y`.
    public func uncompressed() throws -> [UInt8] {
        guard !isAtInfinity else { throw CryptoError("the point at infinity has no uncompressed form") }
        let length = EC_POINT_point2oct(group.group, point, POINT_CONVERSION_UNCOMPRESSED, nil, 0, nil)
        var out = [UInt8](repeating: 0, count: length)
        guard length > 0, EC_POINT_point2oct(group.group, point, POINT_CONVERSION_UNCOMPRESSED, &out, length, nil) == length else {
            throw CryptoError("cannot encode the point: \(OpenSSLError.last())")
        }
        return out
    }

    /// The affine x-coordinate, big-endian, padded to the coordinate length.
    public func x() throws -> [UInt8] {
        guard !isAtInfinity else { throw CryptoError("the point at infinity has no coordinates") }
        guard let x = BN_new() else { throw CryptoError("out of memory") }
        defer { BN_clear_free(x) }
        var out = [UInt8](repeating: 0, count: group.coordinateLength)
        guard EC_POINT_get_affine_coordinates(group.group, point, x, nil, nil) == 1,
              BN_bn2binpad(x, &out, Int32(out.count)) == out.count else {
            throw CryptoError("cannot read the point's coordinates: \(OpenSSLError.last())")
        }
        return out
    }

    /// `scalar · self`; refuses a result at infinity (a degenerate key or a hostile point).
    public func multiplied(by scalar: ECScalar) throws -> ECPoint {
        let result = try ECPoint.new(on: group)
        guard EC_POINT_mul(group.group, result.point, nil, point, scalar.bignum, nil) == 1 else {
            throw CryptoError("point multiplication failed: \(OpenSSLError.last())")
        }
        guard !result.isAtInfinity else { throw CryptoError("point multiplication gave the point at infinity") }
        return result
    }

    /// `self + other` (both on the same curve); refuses a result at infinity.
    public func adding(_ other: ECPoint) throws -> ECPoint {
        guard other.group.curve == group.curve else { throw CryptoError("the points lie on different curves") }
        let result = try ECPoint.new(on: group)
        guard EC_POINT_add(group.group, result.point, point, other.point, nil) == 1 else {
            throw CryptoError("point addition failed: \(OpenSSLError.last())")
        }
        guard !result.isAtInfinity else { throw CryptoError("point addition gave the point at infinity") }
        return result
    }

    /// `scalar · G` for the group's (possibly mapped) generator G.
    static func generatorMultiple(_ scalar: ECScalar, on group: ECGroup) throws -> ECPoint {
        let result = try ECPoint.new(on: group)
        guard EC_POINT_mul(group.group, result.point, scalar.bignum, nil, nil, nil) == 1 else {
            throw CryptoError("point multiplication failed: \(OpenSSLError.last())")
        }
        guard !result.isAtInfinity else { throw CryptoError("point multiplication gave the point at infinity") }
        return result
    }

    public static func == (lhs: ECPoint, rhs: ECPoint) -> Bool {
        lhs.group.curve == rhs.group.curve && EC_POINT_cmp(lhs.group.group, lhs.point, rhs.point, nil) == 0
    }
}

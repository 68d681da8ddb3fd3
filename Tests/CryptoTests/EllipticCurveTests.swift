import Crypto
import XCTest

/// The curve arithmetic PACE's generic mapping needs; the ICAO 9303 known answers on
/// brainpoolP256r1 are in SmartCardTests/PACEWorkedExampleTests.swift.
final class EllipticCurveTests: XCTestCase {
    func testECDHAgreesOnEveryCurve() throws {
        for curve in EllipticCurve.allCases {
            let group = try ECGroup(curve)
            let alice = try ECScalar.random(in: group), bob = try ECScalar.random(in: group)
            let alicePublic = try alice.publicPoint(on: group), bobPublic = try bob.publicPoint(on: group)
            let encoded = try alicePublic.uncompressed()
            XCTAssertEqual(encoded.count, 1 + 2 * group.coordinateLength, curve.rawValue)
            XCTAssertEqual(try ECPoint(uncompressed: encoded, on: group), alicePublic, curve.rawValue)
            let one = try alice.sharedSecret(with: bobPublic), other = try bob.sharedSecret(with: alicePublic)
            XCTAssertEqual(one.count, group.coordinateLength, curve.rawValue)
            XCTAssertTrue(one.withBytes { a in other.withBytes { b in a.elementsEqual(b) } }, curve.rawValue)
        }
        XCTAssertEqual(try ECGroup(.p521).coordinateLength, 66)
    }

    func testPointsOffTheCurveOrBadlyEncodedAreRefused() throws {
        let group = try ECGroup(.p256)
        let good = try ECScalar.random(in: group).publicPoint(on: group).uncompressed()
        var offCurve = good
        offCurve[offCurve.count - 1] ^= 0x01
        var compressed = Array(good.prefix(33))
        compressed[0] = 0x02 | (good.last! & 1)
        for bad in [offCurve, compressed, [0x00], [], Array(good.dropLast()), good + [0], [0x04] + [UInt8](repeating: 0, count: 64)] {
            XCTAssertThrowsError(try ECPoint(uncompressed: bad, on: group), "\(bad.count) bytes")
        }
        // A P-256 point is not a P-384 point, not even of the right length.
        XCTAssertThrowsError(try ECPoint(uncompressed: good, on: ECGroup(.p384)))
    }

    func testAMappedGeneratorIsUsedForKeysOnTheMappedGroup() throws {
        for curve in [EllipticCurve.p256, .brainpoolP256r1, .p521] {
            let group = try ECGroup(curve)
            let s = try ECScalar.random(in: group)
            let h = try ECScalar.random(in: group).publicPoint(on: group)
            let mappedGenerator = try s.publicPoint(on: group).adding(h)
            let mapped = try group.withGenerator(mappedGenerator)
            let key = try ECScalar.random(in: group)
            // k·G' by the group's generator equals k times G' as an ordinary point (this also
            // guards P-256, whose fast code has a table for the standard generator only).
            XCTAssertEqual(try key.publicPoint(on: mapped), try mappedGenerator.multiplied(by: key), curve.rawValue)
            XCTAssertNotEqual(try key.publicPoint(on: mapped), try key.publicPoint(on: group), curve.rawValue)
        }
    }

    func testAdditionAndMultiplicationAgree() throws {
        let group = try ECGroup(.brainpoolP384r1)
        let g = try ECScalar(bytes: [1]).publicPoint(on: group)
        XCTAssertEqual(try g.adding(g), try ECScalar(bytes: [2]).publicPoint(on: group))
        XCTAssertEqual(try g.adding(g).adding(g), try g.multiplied(by: ECScalar(bytes: [3])))
        XCTAssertThrowsError(try ECScalar(bytes: []))
        // 0·G is the point at infinity: refused rather than returned.
        XCTAssertThrowsError(try ECScalar(bytes: [0]).publicPoint(on: group))
    }
}

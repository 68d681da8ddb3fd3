import Foundation
import TestTools
import XCTest
@testable import Crypto

/// ECDH and RSA key transport, checked against the openssl command line on the same keys.
final class KeyAgreementTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("keyagreement-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    private func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func testECDHAgreesWithOpenSSLOnBothCurves() throws {
        for (curve, name) in [(EllipticCurve.p256, "prime256v1"), (.p384, "secp384r1")] {
            _ = try Shell.run("/usr/bin/openssl", ["ecparam", "-name", name, "-genkey", "-noout", "-out", path("mine.pem")])
            _ = try Shell.run("/usr/bin/openssl", ["ec", "-in", path("mine.pem"), "-pubout", "-out", path("mine.pub")])
            let peer = try PrivateKey.generateEC(curve)
            let peerPoint = try peer.publicKey.rawKeyBytes()
            XCTAssertEqual(peerPoint.first, 0x04)
            let peerPublic = try PublicKey.ec(point: peerPoint, curve: curve)
            try Data(try peerPublic.subjectPublicKeyInfo()).write(to: folder.appendingPathComponent("peer.der"))
            _ = try Shell.run("/usr/bin/openssl", ["pkey", "-pubin", "-inform", "DER", "-in", path("peer.der"), "-out", path("peer.pem")])
            let expected = try Shell.run("/usr/bin/openssl", ["pkeyutl", "-derive", "-inkey", path("mine.pem"), "-peerkey", path("peer.pem"), "-out", path("z")])
            XCTAssertEqual(expected.status, 0, expected.stderr)

            let mine = try PrivateKey.read(Array(try Data(contentsOf: folder.appendingPathComponent("mine.pem"))))
            let z = try mine.agree(with: peerPublic)
            let zBack = try peer.agree(with: try PublicKey.read(Array(try Data(contentsOf: folder.appendingPathComponent("mine.pub")))))
            z.withBytes { mineZ in zBack.withBytes { XCTAssertEqual(Array(mineZ), Array($0)) } }
            z.withBytes { XCTAssertEqual(Array($0), Array(try! Data(contentsOf: folder.appendingPathComponent("z")))) }
            XCTAssertEqual(z.count, curve == .p256 ? 32 : 48)
            XCTAssertEqual(mine.publicKey.curve, curve)
        }
    }

    func testAPointOffTheCurveIsRefused() throws {
        var point = try PrivateKey.generateEC(.p256).publicKey.rawKeyBytes()
        point[40] ^= 0x01
        XCTAssertThrowsError(try PublicKey.ec(point: point, curve: .p256))
    }

    func testRSAKeyTransportRoundTripsAndMatchesOpenSSL() throws {
        _ = try Shell.run("/usr/bin/openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path("rsa.pem")])
        let key = try PrivateKey.read(Array(try Data(contentsOf: folder.appendingPathComponent("rsa.pem"))))
        let secret = SecretBytes(Array(0..<32))
        for padding in [RSAKeyPadding.pkcs1v15, .oaepSHA256] {
            let wrapped = try key.publicKey.encrypt(secret, padding: padding)
            try key.decrypt(wrapped, padding: padding).withBytes { XCTAssertEqual(Array($0), Array(0..<32)) }
        }
        // OAEP-SHA256 made by openssl opens here; PKCS#1 v1.5 with the wrong padding does not.
        try Data(Array(0..<32) as [UInt8]).write(to: folder.appendingPathComponent("kek"))
        let made = try Shell.run("/usr/bin/openssl", ["pkeyutl", "-encrypt", "-inkey", path("rsa.pem"), "-in", path("kek"), "-out", path("kek.enc"),
                                                      "-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256"])
        XCTAssertEqual(made.status, 0, made.stderr)
        let fromOpenSSL = Array(try Data(contentsOf: folder.appendingPathComponent("kek.enc")))
        try key.decrypt(fromOpenSSL, padding: .oaepSHA256).withBytes { XCTAssertEqual(Array($0), Array(0..<32)) }
        XCTAssertThrowsError(try key.decrypt(fromOpenSSL, padding: .pkcs1v15))
        // PKCS#1 DER of the public key reads back as the same key.
        let pkcs1 = try key.publicKey.rawKeyBytes()
        XCTAssertEqual(try PublicKey.rsa(pkcs1: pkcs1).subjectPublicKeyInfo(), try key.publicKey.subjectPublicKeyInfo())
    }
}

import Crypto
import Foundation
@testable import Signing
import XCTest

/// The pieces of remote signing that need no service: request bodies built in wiped memory,
/// the CSC algorithm OIDs, ECDSA values, and the decoding of the service's answers.
final class RemoteRequestTests: XCTestCase {
    func testRequestBodiesAreJSONWithSecretsEscapedInPlace() throws {
        let pin = SecretBytes(Array("1\"2\\3\n".utf8))
        let body = RemoteRequestBody.encode([
            ("credentialID", .text("ÕUN/1")), ("numSignatures", .number(1)), ("certInfo", .flag(true)),
            ("hash", .texts(["AAA=", "BBB="])), ("PIN", .secret(pin)),
        ])
        let text = body.withBytes { String(decoding: $0, as: UTF8.self) }
        XCTAssertEqual(text, #"{"credentialID":"ÕUN/1","numSignatures":1,"certInfo":true,"hash":["AAA=","BBB="],"PIN":"1\"2\\3\u000a"}"#)
        let parsed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(parsed["PIN"] as? String, "1\"2\\3\n")
        XCTAssertEqual(RemoteRequestBody.encode([]).withBytes { Array($0) }, Array("{}".utf8))
    }

    func testTheSignatureAlgorithmComesFromTheKeysAlgorithms() {
        let ecdsa384 = SignatureAlgorithm(.ecdsa, .sha384)
        XCTAssertEqual(CSCAlgorithm.choose(ecdsa384, supported: ["1.2.840.10045.4.3.3"]),
                       CSCAlgorithm(signAlgo: "1.2.840.10045.4.3.3", hashAlgo: nil, plainECDSA: false))
        XCTAssertEqual(CSCAlgorithm.choose(ecdsa384, supported: ["0.4.0.127.0.7.1.1.4.1.4"]),
                       CSCAlgorithm(signAlgo: "0.4.0.127.0.7.1.1.4.1.4", hashAlgo: nil, plainECDSA: true))
        let rsa = SignatureAlgorithm(.rsaPKCS1, .sha256)
        XCTAssertEqual(CSCAlgorithm.choose(rsa, supported: ["1.2.840.113549.1.1.1"]),
                       CSCAlgorithm(signAlgo: "1.2.840.113549.1.1.1", hashAlgo: "2.16.840.1.101.3.4.2.1", plainECDSA: false))
        XCTAssertEqual(CSCAlgorithm.choose(rsa, supported: ["1.2.840.113549.1.1.11", "1.2.840.113549.1.1.1"])?.signAlgo,
                       "1.2.840.113549.1.1.11")
        XCTAssertNil(CSCAlgorithm.choose(rsa, supported: ["1.2.840.10045.4.3.2"]))
        XCTAssertNil(CSCAlgorithm.choose(SignatureAlgorithm(.rsaPSS, .sha256), supported: ["1.2.840.113549.1.1.10"]))
        // An RSA key that offers only SHA-512 signs SHA-512.
        XCTAssertEqual(CSCAlgorithm.preferred(for: nil, supported: ["1.2.840.113549.1.1.13"]), SignatureAlgorithm(.rsaPKCS1, .sha512))
    }

    func testDERECDSAValuesBecomeRawAndPlainOnesMustFitTheKey() throws {
        let raw = [UInt8](repeating: 0x11, count: 48) + [UInt8](repeating: 0x22, count: 48)
        let der = try XCTUnwrap(ECDSASignature.der(fromRaw: raw))
        let key = try XCTUnwrap(ecKey384())
        let withDER = CSCAlgorithm(signAlgo: "1.2.840.10045.4.3.3", hashAlgo: nil, plainECDSA: false)
        XCTAssertEqual(withDER.xmlValue(der, key: key), raw)
        XCTAssertNil(withDER.xmlValue(raw, key: key), "a raw value where DER was due")
        let plain = CSCAlgorithm(signAlgo: "0.4.0.127.0.7.1.1.4.1.4", hashAlgo: nil, plainECDSA: true)
        XCTAssertEqual(plain.xmlValue(raw, key: key), raw)
        XCTAssertNil(plain.xmlValue(Array(raw.dropLast()), key: key))
    }

    func testCredentialInfoIsDecodedWithTheServicesMemberNames() throws {
        let json = #"""
        {"description":"d","key":{"status":"enabled","algo":["1.2.840.10045.4.3.3"],"len":384,"curve":"1.3.132.0.34"},
         "cert":{"status":"valid","certificates":["AA=="]},"authMode":"explicit","SCAL":2,
         "PIN":{"presence":true,"format":"N","label":"PIN"},"OTP":{"presence":"false"},"multisign":1,"extra":1}
        """#
        let info = try JSONDecoder().decode(CSCCredentialInfo.self, from: Data(json.utf8))
        XCTAssertTrue(info.bindsHashes)
        XCTAssertTrue(info.isExplicit)
        XCTAssertTrue(CSCCredentialInfo.needed(info.pin))
        XCTAssertFalse(CSCCredentialInfo.needed(info.otp))
        XCTAssertThrowsError(try JSONDecoder().decode(CSCCredentialInfo.self, from: Data(#"{"key":{"status":"enabled"}}"#.utf8)))
        let error = try JSONDecoder().decode(CSCError.self, from: Data(#"{"error":"invalid_request","error_description":"SAD expired"}"#.utf8))
        XCTAssertEqual(RemoteFailure.status(400, body: Array(#"{"error":"invalid_request","error_description":"SAD expired"}"#.utf8),
                                            method: "signatures/signHash", credential: "c", loggedIn: true).description,
                       "remote signing: the service's authorization (SAD) expired before the signature was made; sign again")
        XCTAssertEqual(error.description, "SAD expired")
    }

    /// A P-384 public key, from a certificate made on the spot by openssl.
    private func ecKey384() throws -> PublicKey? {
        let folder = NSTemporaryDirectory() + "asicfs-remote-key-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-384", "-nodes", "-keyout",
                             folder + "/k.pem", "-out", folder + "/c.pem", "-subj", "/CN=t", "-outform", "DER"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let der = try Data(contentsOf: URL(fileURLWithPath: folder + "/c.pem"))
        return try Certificate(der: Array(der)).publicKey
    }
}

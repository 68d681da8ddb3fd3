import Foundation
import TestTools
import XCTest

/// Decrypting a mounted encrypted container with a PKCS#11 token through
/// `.asicfs/decrypt/pkcs11`: a SoftHSM token (found through p11-kit, no module path) with an EC
/// P-256 key that derives (CKM_ECDH1_DERIVE; a CDOC2 for it) and an RSA key (PKCS#1 v1.5 key
/// transport; a CDOC 1.1 for it); pinentry run by the daemon asks the token's PIN.
final class MountDecryptPKCS11Tests: XCTestCase {
    static let pin = "582913"

    func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// A token "decrypt" with the keys `ec` and `rsa` and their certificates (in `fixture`'s folder).
    func token(_ fixture: MountFixture) throws -> SoftHSMTokens {
        let tokens = try SoftHSMTokens(folder: fixture.folder + "/softhsm")
        var identities: [SoftHSMTokens.Identity] = []
        for (index, (name, algorithm, usage)) in [("ec", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256", "keyAgreement"),
                                                  ("rsa", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048", "keyEncipherment")].enumerated() {
            let key = fixture.folder + "/\(name).key", certificate = fixture.folder + "/\(name).pem"
            let made = try Shell.sh("set -e; openssl genpkey \(algorithm) -out '\(key)' 2>/dev/null; "
                + "openssl req -new -x509 -key '\(key)' -out '\(certificate)' -days 30 -subj '/CN=asicfs mount \(name)' "
                + "-addext 'keyUsage=critical,\(usage)' 2>&1")
            XCTAssertEqual(made.status, 0, made.stdout)
            identities.append(.init(key: key, certificate: certificate, id: String(format: "%02x", index + 1), label: name,
                                    derive: name == "ec"))
        }
        try tokens.makeToken(label: "decrypt", pin: Self.pin, identities: identities)
        return tokens
    }

    /// A container of `format` for the certificate `name`.pem, mounted with the token and a
    /// pinentry answering `pin`.
    func mounted(_ fixture: MountFixture, _ tokens: SoftHSMTokens, format: String, for name: String, pin: String)
        throws -> (files: [String: [UInt8]], pinentryLog: String) {
        let files: [String: [UInt8]] = ["arve.txt": Array("Arve nr 17\n".utf8), "pilt.bin": (0..<40_000).map { UInt8($0 % 251) }]
        for (file, bytes) in files { try writeFile(bytes, fixture.folder + "/" + file) }
        let container = fixture.folder + "/letter.\(format)"
        let made = try Shell.run(MountFixture.binary, ["encrypt", container] + files.keys.sorted().map { fixture.folder + "/" + $0 }
                                 + ["--recipient", fixture.folder + "/\(name).pem", "--format", format])
        XCTAssertEqual(made.status, 0, made.stderr)
        for file in files.keys { unlink(fixture.folder + "/" + file) }
        let program = fixture.folder + "/fake-pinentry", log = fixture.folder + "/pinentry.log"
        try FakePinentry.write(to: program, pin: pin, log: log)
        try fixture.mount(["pinentry=\(program)"], container: container, environment: tokens.environment)
        return (files, log)
    }

    func request(_ fixture: MountFixture, _ line: String) throws {
        let written = try Shell.run("/bin/bash", ["-c", "echo '\(line)' > '\(fixture.path(".asicfs/decrypt/pkcs11"))'"])
        XCTAssertEqual(written.status, 0, written.stderr)
    }

    func outcome(_ fixture: MountFixture, timeout: TimeInterval = 60) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let text = try text(fixture.path(".asicfs/status/current"))
            if text.hasPrefix("done:") || text.hasPrefix("failed:") || Date() > deadline { return text }
            usleep(20_000)
        }
    }

    func assertShown(_ fixture: MountFixture, _ files: [String: [UInt8]], file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.mountpoint).sorted(), [".asicfs"] + files.keys.sorted(),
                       file: file, line: line)
        for (name, bytes) in files { XCTAssertEqual(try readFile(fixture.path(name)), bytes, name, file: file, line: line) }
    }

    func testECKeyDerivesForACDOC2ThroughPinentry() throws {
        let fixture = try MountFixture(self)
        let tokens = try token(fixture)
        let (files, log) = try mounted(fixture, tokens, format: "cdoc2", for: "ec", pin: Self.pin)
        XCTAssertFalse(try text(fixture.path(".asicfs/decrypt/pkcs11")).contains("pin-fd"), "refused in a mount, so not offered")
        try request(fixture, "label=decrypt key=ec")
        XCTAssertEqual(try outcome(fixture), "done: decrypted 2 files with pkcs11\n")
        try assertShown(fixture, files)
        let transcript = try text(log)
        XCTAssertTrue(transcript.contains("SETDESC ") && transcript.contains("decrypt"), transcript)
        XCTAssertTrue(transcript.contains("PARENT-ENV "), transcript)
        XCTAssertFalse(transcript.contains(Self.pin), "the PIN is in no command line or environment: \(transcript)")
        XCTAssertFalse(try text(fixture.path(".asicfs/status/current")).contains(Self.pin))
        try fixture.unmount()
        XCTAssertFalse(fixture.stderrText.contains(Self.pin))
    }

    func testRSAKeyUnwrapsACDOC11ThroughPinentry() throws {
        let fixture = try MountFixture(self)
        let tokens = try token(fixture)
        let (files, _) = try mounted(fixture, tokens, format: "cdoc", for: "rsa", pin: Self.pin)
        try request(fixture, "key=rsa")
        XCTAssertEqual(try outcome(fixture), "done: decrypted 2 files with pkcs11\n")
        try assertShown(fixture, files)
        try fixture.unmount()
    }

    /// A wrong PIN: one line, the token's counter low, nothing shown; the mount goes on.
    func testAWrongPINShowsNothingAndCountsOnTheToken() throws {
        let fixture = try MountFixture(self)
        let tokens = try token(fixture)
        _ = try mounted(fixture, tokens, format: "cdoc2", for: "ec", pin: "000000")
        try request(fixture, "key=ec")
        let failed = try outcome(fixture)
        XCTAssertTrue(failed.hasPrefix("failed: decrypting with pkcs11 failed: ") && failed.contains("wrong PIN for the token \"decrypt\""),
                      failed)
        XCTAssertEqual(try text(fixture.path(".asicfs/status/last-error")), String(failed.dropFirst("failed: ".count)))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.mountpoint), [".asicfs"])
        XCTAssertEqual(try text(fixture.path(".asicfs/status/current")), failed, "the daemon answers")
        try fixture.unmount()
        XCTAssertTrue(try tokens.flags(of: "decrypt").contains("count low"))
    }
}

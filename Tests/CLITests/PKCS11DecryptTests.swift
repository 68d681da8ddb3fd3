import Foundation
import TestTools
import XCTest

/// `asicfs decrypt --method pkcs11` with an EC key on a SoftHSM token the test makes (through
/// p11-kit's module list, and by module path): CDOC 1.1 and CDOC2 written by `asicfs encrypt`
/// for the token's certificate decrypt byte-exact with CKM_ECDH1_DERIVE on the token.
final class PKCS11DecryptTests: CLITestCase {
    static let pin = "80417"
    private var tokens: SoftHSMTokens!
    private var certificate: String { path("ec.pem") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        tokens = try SoftHSMTokens(folder: path("softhsm"))
        let key = path("ec.key")
        let made = try Shell.sh("set -e; openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out '\(key)' 2>/dev/null; "
            + "openssl req -new -x509 -key '\(key)' -out '\(certificate)' -days 30 -subj '/CN=asicfs decrypt token' "
            + "-addext 'keyUsage=critical,keyAgreement' 2>&1")
        XCTAssertEqual(made.status, 0, made.stdout)
        try tokens.makeToken(label: "cdoc", pin: Self.pin,
                             identities: [.init(key: key, certificate: certificate, id: "01", label: "ec384", derive: true)])
        // The private key file goes: only the token holds the key now.
        try FileManager.default.removeItem(atPath: key)
    }

    /// asicfs with the tokens' environment and the PIN on descriptor 3 (never argv or environment).
    func decrypt(_ arguments: [String], pin: String) throws -> RunResult {
        let pinFile = try write("pin-\(UUID().uuidString.prefix(6))", pin + "\n")
        return try runTool("/bin/sh", ["-c", "exec \"$@\" 3< \"$PIN_FILE\"", "sh", Self.binary, "decrypt"] + arguments
            + ["--method", "pkcs11", "pin-fd=3", "-o", "pinentry=none"],
                           environment: tokens.environment.merging(["PIN_FILE": pinFile]) { $1 })
    }

    func testECKeyOnTheTokenDecryptsCDOC11AndCDOC2() throws {
        let letter = try write("kiri.txt", "Tere tokenist!\n")
        let data = path("data.bin")
        try writeRandomFile(data, size: 120_000)
        for format in ["cdoc", "cdoc2"] {
            let out = path("token.\(format)")
            assertSuccess(try asicfs(["encrypt", out, letter, data, "-r", certificate, "--format", format]))
            for (index, selection) in [["label=cdoc"], ["module=\(SoftHSMTokens.module)", "label=cdoc", "key=ec384"]].enumerated() {
                let folder = path("plain-\(format)-\(index)")
                let result = try decrypt([out, "-d", folder] + selection, pin: Self.pin)
                assertSuccess(result)
                XCTAssertFalse((result.stdout + result.stderr).contains(Self.pin))
                XCTAssertEqual(try read(folder + "/kiri.txt"), try read(letter), format)
                XCTAssertEqual(try read(folder + "/data.bin"), try read(data), format)
            }
        }
        // A wrong PIN: one line, nothing written.
        assertFailure(try decrypt([path("token.cdoc2"), "-d", path("wrong"), "label=cdoc"], pin: "11111"), mentions: ["PIN"])
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: path("wrong"))) ?? [], [])
    }
}

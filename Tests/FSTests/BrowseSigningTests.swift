import Foundation
import TestTools
import XCTest

/// Signing inside one container folder of a browse mount while another is being written: each
/// container has its own control folder and signing, as in a single mount (PKCS#12 signer,
/// loopback TSA and OCSP of a fresh test PKI).
final class BrowseSigningTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!

    override class func setUp() { shared = SharedTestServices(label: "fs-browse-signing") }
    override class func tearDown() { shared.stop() }

    func settings() throws -> [String] {
        let services = try XCTUnwrap(Self.shared.services, "the loopback TSA/OCSP services: \(Self.shared.failure ?? "")")
        return ["tsl=none", "trust-anchors=\(services.pki.root)", "tsa-url=\(services.tsaURL)",
                "cache-dir=\(Self.shared.folder)/cache"]
    }

    /// A container folder is let go a few seconds after its last file closes; opened again, it
    /// still tells how its last signing ended (a failure stays a failure), which signatures were
    /// made in it, and the last error.
    func testHowTheLastSigningEndedOutlivesLettingTheContainerGo() throws {
        let services = try XCTUnwrap(Self.shared.services)
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("c.asice", ["a.txt": "a\n"])
        let log = fixture.mount.folder + "/released.log"
        try fixture.start(try settings(), environment: ["ASICFS_TEST_RELEASE_LOG": log])
        func released() -> Int { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count }
        let control = fixture.path("c.asice/.asicfs")
        let wrong = Self.shared.folder + "/wrong-\(UUID().uuidString.prefix(6))"
        try writeFile(Array("not the passphrase\n".utf8), wrong)

        // A signing that fails at once, with no file of the folder open afterwards.
        let failing = try Shell.sh("echo 'file=\(services.pki.signerP12) passphrase-file=\(wrong)' > '\(control)/sign/pkcs12'")
        XCTAssertEqual(failing.status, 0, failing.stderr)
        XCTAssertTrue(eventually(20) { released() >= 1 }, "the container was let go")
        let failed = try Shell.run("/bin/cat", [control + "/status/wait"])
        XCTAssertNotEqual(failed.status, 0, "a failed signing is still reported as one")
        XCTAssertTrue(failed.stdout.hasPrefix("failed: "), failed.stdout)
        let lastError = try String(contentsOfFile: control + "/status/last-error", encoding: .utf8)
        XCTAssertFalse(lastError.isEmpty, "last-error kept")
        XCTAssertEqual(lastError, "signing with pkcs12 failed: wrong passphrase for signer.p12\n")
        XCTAssertEqual(failed.stdout, "failed: wrong passphrase for signer.p12\n")

        // A signing that succeeds: after the next let-go, its method is still known.
        let passphrase = Self.shared.folder + "/pass-\(UUID().uuidString.prefix(6))"
        try writeFile(Array((TestPKI.passphrase + "\n").utf8), passphrase)
        let request = try Shell.sh("echo 'file=\(services.pki.signerP12) passphrase-file=\(passphrase)' > '\(control)/sign/pkcs12'")
        XCTAssertEqual(request.status, 0, request.stderr)
        let done = try Shell.run("/bin/cat", [control + "/status/wait"])
        XCTAssertEqual(done.status, 0, done.stderr)
        XCTAssertTrue(done.stdout.hasPrefix("done: "), done.stdout)
        let before = released()
        XCTAssertTrue(eventually(20) { released() > before }, "the container was let go again")
        XCTAssertEqual(try String(contentsOfFile: control + "/status/current", encoding: .utf8), done.stdout)
        let signatures = try FileManager.default.contentsOfDirectory(atPath: control + "/signatures")
        XCTAssertEqual(signatures.count, 1)
        XCTAssertEqual(try String(contentsOfFile: control + "/signatures/\(signatures[0])/method", encoding: .utf8), "pkcs12\n")
        try fixture.mount.unmount()
    }

    func testSigningInOneContainerFolderWhileAnotherIsWritten() throws {
        let services = try XCTUnwrap(Self.shared.services)
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("contracts/sign-me.asice", ["contract.txt": "contract\n"])
        try fixture.makeContainer("other/busy.asice", ["first.txt": "first\n"])
        let settings = try settings()
        try fixture.start(settings)
        let passphrase = Self.shared.folder + "/pass-\(UUID().uuidString.prefix(6))"
        try writeFile(Array((TestPKI.passphrase + "\n").utf8), passphrase)

        // A big copy into one container runs while the other is signed.
        let big = textLikeBytes(count: 8 << 20, seed: 7)
        try writeFile(big, fixture.mount.folder + "/big.bin")
        let copy = try Shell.spawn("/bin/cp", [fixture.mount.folder + "/big.bin", fixture.path("other/busy.asice/big.bin")],
                                   stdout: "/dev/null", stderr: fixture.mount.folder + "/cp.err")
        let request = try Shell.sh("echo 'file=\(services.pki.signerP12) passphrase-file=\(passphrase)' > '\(fixture.path("contracts/sign-me.asice/.asicfs/sign/pkcs12"))'")
        XCTAssertEqual(request.status, 0, request.stderr)
        let wait = try Shell.run("/bin/cat", [fixture.path("contracts/sign-me.asice/.asicfs/status/wait")])
        XCTAssertEqual(wait.status, 0, wait.stderr)
        XCTAssertTrue(wait.stdout.hasPrefix("done: "), wait.stdout)
        XCTAssertEqual(Shell.wait(copy), 0)

        // Signed: its data files cannot change; the other container is as busy as before.
        let signatures = try FileManager.default.contentsOfDirectory(atPath: fixture.path("contracts/sign-me.asice/.asicfs/signatures"))
        XCTAssertEqual(signatures.count, 1)
        let status = try validatedText(fixture.path("contracts/sign-me.asice/.asicfs/signatures/\(signatures[0])/status"))
        XCTAssertTrue(status.hasPrefix("VALID"), status)
        let refused = try Shell.sh("echo x > '\(fixture.path("contracts/sign-me.asice/contract.txt"))'")
        XCTAssertTrue(refused.stderr.contains("Operation not permitted"), refused.stderr)
        // (The kernel keeps the folder's attributes for a second.)
        XCTAssertTrue(eventually(3) {
            var folder = stat()
            return stat(fixture.path("contracts/sign-me.asice"), &folder) == 0 && folder.st_mode & 0o222 == 0
        }, "a signed container's folder is shown read-only")
        let other = try String(contentsOfFile: fixture.path("other/busy.asice/.asicfs/status/current"), encoding: .utf8)
        XCTAssertTrue(other.hasPrefix("idle"), other)
        XCTAssertEqual(try readFile(fixture.path("other/busy.asice/big.bin")), big)

        try fixture.mount.unmount()
        let verify = try Shell.run(MountFixture.binary, ["verify", fixture.real("contracts/sign-me.asice")] + settings.flatMap { ["-o", $0] })
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
        XCTAssertEqual(try containerContents(fixture.real("other/busy.asice"))["big.bin"], big)
    }
}

import Foundation
import TestTools
import XCTest

/// Remote signing (CSC API) inside a mount: `.asicfs/sign/remote`, the PIN from pinentry (a
/// mount has no descriptors of the user's), the simulator of contrib/simulators and the
/// loopback test PKI, TSA and OCSP.
final class MountRemoteSigningTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedCSCServices!

    override class func setUp() { shared = SharedCSCServices(label: "fs-remote") }
    override class func tearDown() { shared.stop() }

    override func setUpWithError() throws {
        if let failure = Self.shared.failure { throw MountError(failure) }
    }

    /// A pinentry (Assuan) that answers GETPIN with alice-ec's PIN.
    func pinentry() throws -> String {
        let program = Self.shared.folder + "/pinentry-\(UUID().uuidString.prefix(6))"
        try writeFile(Array("""
            #!/bin/sh
            echo "OK Pleased to meet you"
            while IFS= read -r line; do
              case "$line" in
                GETPIN) echo "D \(CSCSimulator.alicePIN)"; echo OK ;;
                BYE) echo OK; exit 0 ;;
                *) echo OK ;;
              esac
            done

            """.utf8), program)
        chmod(program, 0o755)
        return program
    }

    func settings() throws -> [String] {
        let services = try XCTUnwrap(Self.shared.services)
        let simulator = try XCTUnwrap(Self.shared.simulator)
        let password = Self.shared.folder + "/alice-password"
        try writeFile(Array((CSCSimulator.alicePassword + "\n").utf8), password)
        return ["tsl=none", "trust-anchors=\(services.pki.root)", "tsa-url=\(services.tsaURL)", "cache-dir=\(Self.shared.folder)/cache",
                "remote.url=\(simulator.url)", "remote.tls-cert=\(simulator.tlsCertificate)", "remote.username=alice",
                "remote.password-file=\(password)", "pinentry=\(try pinentry())"]
    }

    func bash(_ script: String) throws -> Shell.Output { try Shell.run("/bin/bash", ["-c", script]) }

    func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    func testSigningTwiceThroughSignRemote() throws {
        let fixture = try MountFixture(self)
        try writeFile(Array("the contract\n".utf8), fixture.folder + "/contract.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", fixture.container, fixture.folder + "/contract.txt"]).status, 0)
        try fixture.mount(try settings())
        let m = fixture.mountpoint

        XCTAssertTrue(try text(m + "/.asicfs/sign/remote").hasPrefix("remote: [credential=ID]  (the service: "))
        // Several credentials and none chosen: EINVAL, and last-error lists them; nothing starts.
        let several = try bash("echo '' > '\(m)/.asicfs/sign/remote'")
        XCTAssertTrue(several.stderr.contains("Invalid argument"), several.stderr)
        let listed = try text(m + "/.asicfs/status/last-error")
        XCTAssertTrue(listed.contains("choose one with credential=ID: alice-rsa, alice-ec, "), listed)
        let descriptor = try bash("echo 'credential=alice-ec pin-fd=0' > '\(m)/.asicfs/sign/remote'")
        XCTAssertTrue(descriptor.stderr.contains("Invalid argument"), descriptor.stderr)
        XCTAssertTrue(try text(m + "/.asicfs/status/last-error").contains("pin-fd= is for the command line"))

        for (credential, index) in [("alice-rsa", 0), ("alice-ec", 1)] {
            let started = try bash("echo 'credential=\(credential) role=Signatory' > '\(m)/.asicfs/sign/remote'")
            XCTAssertEqual(started.status, 0, started.stderr)
            let wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
            XCTAssertEqual(wait.status, 0, wait.stderr)
            XCTAssertTrue(wait.stdout.hasPrefix("done: signed: MÄGI,ALICE-ÕIE,48001010005 S\(index) in "
                                                + "META-INF/signatures\(index).xml, VALID"), wait.stdout)
        }
        let folders = try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures").sorted()
        XCTAssertEqual(folders, ["0-MÄGI,ALICE-ÕIE,48001010005", "1-MÄGI,ALICE-ÕIE,48001010005"])
        for folder in folders {
            XCTAssertEqual(try text(m + "/.asicfs/signatures/\(folder)/method"), "remote\n")
            XCTAssertEqual(try validatedText(m + "/.asicfs/signatures/\(folder)/status").split(separator: "\n").first, "VALID")
        }
        try fixture.unmount()
        let services = try XCTUnwrap(Self.shared.services)
        let verified = try Shell.run(MountFixture.binary, ["verify", fixture.container, "-o", "tsl=none",
                                                           "-o", "trust-anchors=\(services.pki.root)"])
        XCTAssertEqual(verified.status, 0, verified.stdout + verified.stderr)
        XCTAssertTrue(verified.stdout.hasSuffix("Result: VALID\n"), verified.stdout)
    }
}

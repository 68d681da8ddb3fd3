import Foundation
import TestTools
import XCTest

/// The passphrase prompt on a real terminal (a pty): echo off while typing, three tries, and
/// Ctrl-C puts the echo back before asicfs ends.
final class PassphrasePromptTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "cli-prompt") }
    override class func tearDown() { shared.stop() }

    var services: TestServices {
        get throws { try XCTUnwrap(Self.shared.services, "the loopback services and the test PKI") }
    }

    func signArguments() throws -> [String] {
        try write("doc.txt", "the document\n")
        assertSuccess(try asicfs(["create", path("doc.asice"), path("doc.txt")]))
        let services = try services
        return ["sign", path("doc.asice"), "--method", "pkcs12", "file=\(services.pki.signerP12)",
                "-o", "tsa-url=\(services.tsaURL)", "-o", "tsl=none", "-o", "trust-anchors=\(services.pki.root)",
                "-o", "cache-dir=\(Self.shared.folder)/cache", "-o", "pinentry=none"]
    }

    func testThreeTriesWithEchoOff() throws {
        let output = try onTerminal(try signArguments(), script: [
            ("Passphrase for", "wrong one\n"), ("try again (2 left)", ""), ("Passphrase for", "wrong two\n"),
            ("try again (1 left)", ""), ("Passphrase for", TestPKI.passphrase + "\n"),
        ])
        XCTAssertTrue(output.contains("ECHO-AT-PROMPT 0"), output)
        XCTAssertTrue(output.contains("signed: JÕEORG,JAAK-KRISTJAN,38001085718"), output)
        XCTAssertTrue(output.hasSuffix("EXIT 0\n"), output)
        XCTAssertFalse(output.contains("wrong one") || output.contains(TestPKI.passphrase), "typed secrets were echoed: \(output)")
        XCTAssertTrue(output.contains("ECHO-AFTER 1"), output)
    }

    func testThreeWrongPassphrasesEndTheSigning() throws {
        let arguments = try signArguments()
        let before = try read(path("doc.asice"))
        let output = try onTerminal(arguments, script: [
            ("Passphrase for", "a\n"), ("(2 left)", ""), ("Passphrase for", "b\n"), ("(1 left)", ""), ("Passphrase for", "c\n"),
        ])
        XCTAssertTrue(output.contains("wrong passphrase"), output)
        XCTAssertTrue(output.hasSuffix("EXIT 1\n"), output)
        XCTAssertTrue(output.contains("ECHO-AFTER 1"), output)
        XCTAssertEqual(try read(path("doc.asice")), before, "nothing was signed")
    }

    /// Ctrl-C while the echo is off: asicfs ends (SIGINT) and the terminal echoes again.
    func testCtrlCAtThePromptRestoresTheEcho() throws {
        let output = try onTerminal(try signArguments(), script: [("Passphrase for", "\u{03}")])
        XCTAssertTrue(output.contains("ECHO-AT-PROMPT 0"), output)
        XCTAssertTrue(output.contains("SIGNAL 2"), output)
        XCTAssertTrue(output.contains("ECHO-AFTER 1"), "the terminal was left without echo: \(output)")
    }
}

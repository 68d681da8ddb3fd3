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

    /// No passphrase-file=, no terminal and no desktop: the default pinentry (pinentry-curses on
    /// Debian, stood in for by a program that fails as it does) cannot ask, so it is not run;
    /// the usage error says what to give instead (exit status 2). (Before: pinentry was run and
    /// failed, "83918950 Inappropriate ioctl for device", exit status 1.)
    func testWithNoWayToAskTheUsageErrorSaysWhatToGive() throws {
        let arguments = try signArguments().filter { $0 != "pinentry=none" }.dropLast()
        let bin = work.appendingPathComponent("bin").path
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let curses = "#!/bin/sh\necho 'OK Pleased to meet you'\nwhile read -r line; do case \"$line\" in "
            + "GETPIN) echo 'ERR 83918950 Inappropriate ioctl for device <Pinentry>' ;; BYE) echo OK; exit 0 ;; *) echo OK ;; esac; done\n"
        _ = try write("pinentry", curses, in: URL(fileURLWithPath: bin))
        chmod(bin + "/pinentry", 0o755)
        let before = try read(path("doc.asice"))
        let result = try runTool("/usr/bin/env", ["-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", "PATH=\(bin):/usr/bin:/bin",
                                                  "setsid", "-w", Self.binary] + arguments)
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("asicfs: pkcs12: 'passphrase-file=PATH' is required here (no terminal to ask on, "
            + "and no DISPLAY or WAYLAND_DISPLAY for pinentry's dialog)"), result.stderr)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssertEqual(try read(path("doc.asice")), before, "nothing was signed")
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

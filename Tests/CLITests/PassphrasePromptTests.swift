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

    /// Runs `asicfs sign C --method pkcs12 file=P12 …settings` on a pty and plays `script`:
    /// pairs of (text to wait for, bytes to type). Prints the output, then "ECHO-AT-PROMPT n",
    /// "ECHO-AFTER n" and "EXIT n" / "SIGNAL n".
    func onTerminal(_ arguments: [String], script: [(String, String)]) throws -> String {
        let steps = try JSONSerialization.data(withJSONObject: script.map { [$0.0, $0.1] })
        let driver = """
            import json, os, pty, select, sys, termios, time
            argv, steps = json.loads(sys.argv[1]), json.loads(sys.argv[2])
            pid, master = pty.fork()
            if pid == 0:
                os.execv(argv[0], argv)
            seen, echo_at_prompt = b'', None
            def wait_for(text, limit=20):
                global seen
                end = time.time() + limit
                while text.encode() not in seen and time.time() < end:
                    ready, _, _ = select.select([master], [], [], 0.2)
                    if ready:
                        try: seen += os.read(master, 4096)
                        except OSError: return
            for text, typed in steps:
                wait_for(text)
                time.sleep(0.2)
                if echo_at_prompt is None:
                    echo_at_prompt = int(bool(termios.tcgetattr(master)[3] & termios.ECHO))
                os.write(master, typed.encode())
            wait_for('\\u0000', limit=15)
            echo_after = int(bool(termios.tcgetattr(master)[3] & termios.ECHO))
            _, status = os.waitpid(pid, 0)
            sys.stdout.write(seen.decode(errors='replace'))
            print('\\nECHO-AT-PROMPT %s' % echo_at_prompt)
            print('ECHO-AFTER %d' % echo_after)
            print('SIGNAL %d' % os.WTERMSIG(status) if os.WIFSIGNALED(status) else 'EXIT %d' % os.WEXITSTATUS(status))
            """
        let spec = String(decoding: try JSONSerialization.data(withJSONObject: [Self.binary] + arguments), as: UTF8.self)
        let result = try runTool("/usr/bin/python3", ["-c", driver, spec, String(decoding: steps, as: UTF8.self)])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
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

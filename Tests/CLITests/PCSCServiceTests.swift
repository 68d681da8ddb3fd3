import Foundation
import TestTools
import XCTest

/// The ID-card with no PC/SC service, and with one that has no readers: one line each, fast,
/// and nothing written. Runs its own pcscd (only one can run on a machine).
final class PCSCServiceTests: CLITestCase {
    func pcscdRunning() throws -> Bool {
        let found = try runTool("/usr/bin/pgrep", ["-x", "pcscd"])
        // pgrep also finds zombies: only a live process counts.
        return found.stdout.split(separator: "\n").contains { pid in
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: " ").dropFirst(2).first
            return state != nil && state != "Z"
        }
    }

    func testNoServiceAndNoReaderAreOneLineAndTheContainerStaysAsItWas() throws {
        XCTAssertFalse(try pcscdRunning(), "another pcscd runs; this test needs the machine's pcscd stopped")
        let file = try write("a.txt", "a\n")
        assertSuccess(try asicfs(["create", "doc.asice", file]))
        let container = path("doc.asice")
        let before = try read(container)

        let started = Date()
        assertFailure(try asicfs(["sign", container, "--method", "id-card", "pin-fd=0", "-o", "pinentry=none"]),
                      mentions: ["the PC/SC service pcscd is not running"])
        assertFailure(try asicfs(["card", "status"]), mentions: ["the PC/SC service pcscd is not running"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)

        // pcscd with an empty reader configuration (and no USB readers here): no reader at all.
        let configuration = path("reader.conf.d")
        try FileManager.default.createDirectory(atPath: configuration, withIntermediateDirectories: true)
        let pcscd = try Shell.spawn("/usr/sbin/pcscd", ["-f", "-c", configuration], stdout: path("pcscd.out"), stderr: path("pcscd.err"))
        defer {
            kill(pcscd, SIGTERM)
            _ = Shell.wait(pcscd)
        }
        waitForFile("/run/pcscd/pcscd.comm", seconds: 10)
        assertFailure(try asicfs(["card", "pins"]), mentions: ["no smart-card reader is connected"])
        assertFailure(try asicfs(["sign", container, "--method", "id-card", "pin-fd=0", "-o", "pinentry=none"]),
                      mentions: ["no smart-card reader is connected"])
        XCTAssertEqual(try read(container), before)
    }
}

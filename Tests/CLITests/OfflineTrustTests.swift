import Foundation
import TestTools
import XCTest

/// `verify` with a trusted list that cannot be downloaded: the finding says so (not "no trust is
/// configured"), a download that takes over a second says what it waits for, and the failure
/// is remembered in the cache folder so the next `verify` does not wait again.
final class OfflineTrustTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "cli-offline") }
    override class func tearDown() { shared.stop() }

    /// (Before: "no trust is configured: trusted lists could not be loaded (offline?)", no word
    /// while waiting, and the second verify waited again.)
    func testAnUnreachableListIsNamedAnnouncedAndNotWaitedForTwice() throws {
        let services = try XCTUnwrap(Self.shared.services, "the loopback services and the test PKI")
        let container = path("signed.asice")
        try SignedTestContainers.make(container, files: [("a.txt", Data("a\n".utf8))], binary: Self.binary, services: services)
        // A list server that takes two seconds to hang up without an answer.
        let slow = try LoopbackProcess.start("/usr/bin/python3", ["-c", """
            import socket, time
            s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
            print("PORT", s.getsockname()[1], flush=True)
            while True:
                c, _ = s.accept(); time.sleep(2); c.close()
            """])
        defer { slow.stop() }
        let arguments = ["verify", container, "-o", "tsl=http://127.0.0.1:\(slow.port)/lotl.xml", "-o", "tsl-cert=\(services.pki.root)",
                         "-o", "cache-dir=\(path("cache"))"]

        let first = try asicfs(arguments)
        XCTAssertEqual(first.status, 1, first.stderr)
        XCTAssertTrue(first.stderr.contains("asicfs: downloading the trusted list from 127.0.0.1…\n"), first.stderr)
        XCTAssertTrue(first.stdout.contains("no trust is available: the trusted list could not be downloaded (offline?): "
            + "trusted list http://127.0.0.1:\(slow.port)/lotl.xml cannot be downloaded"), first.stdout)
        XCTAssertFalse(first.stdout.contains("no trust is configured"), first.stdout)

        let start = Date()
        let second = try asicfs(arguments)
        XCTAssertLessThan(Date().timeIntervalSince(start), 1.5, "the second verify waited for the list again")
        XCTAssertFalse(second.stderr.contains("downloading"), second.stderr)
        XCTAssertTrue(second.stdout.contains("the trusted list could not be downloaded (offline?)"), second.stdout)
        XCTAssertTrue(second.stdout.contains("not tried again for 5 minutes: remove \(path("cache"))/lotl.xml.unreachable to try now"),
                      second.stdout)
    }
}

import Foundation
import TestTools
import XCTest

/// Tools that walk or inspect a mount — `getfattr` from a file manager, `ls -l`, `grep -r`,
/// `tar` — never wait on a signing or on the network, and see the control folder hold still.
final class ControlFolderWalkTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "fs-walk") }
    override class func tearDown() { shared.stop() }

    /// The trusted list is a download that never answers: the status attribute, and a
    /// signature's status and report files, say "checking" (validation runs in the background)
    /// while the download is still held, in a single mount and for a container folder in a
    /// browse mount.
    func testNothingThatLooksAtAMountWaitsForABlackHoledTrustedList() throws {
        let server = try HeldServer()
        defer { server.release() }
        let single = try MountFixture(self)
        try MountFixture.makeSigned(single.container, Self.shared)
        // A list by URL needs someone allowed to sign it (any fingerprint: it is never fetched).
        let signer = "tsl-signer-sha256=" + String(repeating: "ab", count: 32)
        try single.mount(["tsl=\(server.url)", signer, "cache-dir=\(single.folder)/cache"])
        let browse = try BrowseFixture(self)
        try FileManager.default.createDirectory(atPath: browse.tree, withIntermediateDirectories: true)
        try MountFixture.makeSigned(browse.real("signed.asice"), Self.shared)
        try browse.start(["tsl=\(server.url)", signer, "cache-dir=\(browse.mount.folder)/cache"])

        for folder in [single.mountpoint, browse.path("signed.asice")] {
            let status = try Shell.run("/usr/bin/getfattr", ["-n", "user.asicfs.status", "--only-values", folder])
            XCTAssertEqual(status.stdout, "checking", "\(folder): \(status.stderr)")
            let signers = try Shell.run("/usr/bin/getfattr", ["-n", "user.asicfs.signers", "--only-values", folder])
            XCTAssertEqual(signers.stdout, "JÕEORG,JAAK-KRISTJAN,38001085718", signers.stderr)
            let dump = try Shell.run("/usr/bin/getfattr", ["-d", "--absolute-names", folder])
            XCTAssertTrue(dump.stdout.contains("user.asicfs.status=\"checking\""), dump.stdout + dump.stderr)
            // The signature's status and report answer at once (a read never waits for the
            // validation), saying the result follows; a walk of the control folder ends.
            let signature = folder + "/.asicfs/signatures/0-JÕEORG,JAAK-KRISTJAN,38001085718"
            let read = try Shell.run("/usr/bin/timeout", ["5", "/bin/cat", signature + "/status", signature + "/report"])
            XCTAssertEqual(read.status, 0, "\(folder): a read of status or report waited")
            XCTAssertEqual(read.stdout, String(repeating: Self.checking, count: 2))
            let walk = try Shell.run("/usr/bin/timeout", ["10", "/bin/grep", "-r", "-l", "-x", "checking", folder + "/.asicfs"])
            XCTAssertEqual(walk.status, 0, walk.stderr)
            XCTAssertEqual(walk.stdout.split(separator: "\n").sorted(), [signature + "/report", signature + "/status"])
            XCTAssertEqual(try Shell.run("/bin/ls", ["-la", folder, folder + "/.asicfs/signatures"]).status, 0)
            XCTAssertEqual(try Shell.run("/usr/bin/stat", [folder, folder + "/.asicfs/container"]).status, 0)
        }
        XCTAssertEqual(try Shell.run("/bin/ls", ["-l", browse.mountpoint]).status, 0)
        // The validation did ask the held server: the answers above came while it was held.
        XCTAssertTrue(eventually(10) { server.acceptedCount >= 2 }, "the trusted list was never asked for")

        // Once the download fails, the validation ends and the attribute says how.
        server.release()
        for folder in [single.mountpoint, browse.path("signed.asice")] {
            var last = ""
            XCTAssertTrue(eventually(30) {
                last = (try? Shell.run("/usr/bin/getfattr", ["-n", "user.asicfs.status", "--only-values", folder]).stdout) ?? ""
                return last != "checking"
            }, folder)
            XCTAssertEqual(last, "INDETERMINATE", folder)
            let status = try validatedText(folder + "/.asicfs/signatures/0-JÕEORG,JAAK-KRISTJAN,38001085718/status")
            XCTAssertEqual(status.split(separator: "\n").first, "INDETERMINATE", status)
        }
        try single.unmount()
        try browse.mount.unmount()
    }

    /// What a signature's `status` and `report` say until the background validation ends.
    static let checking = "checking\nchecking: the signatures are being validated in the background; read this file again for the result\n"

    /// `status/wait` is opened by name but not listed; control files keep their time; `tar`
    /// of a mount (a signed container's, with its signature status files) exits 0.
    func testTheControlFolderCanBeWalkedAndCopied() throws {
        let fixture = try MountFixture(self)
        try MountFixture.makeSigned(fixture.container, Self.shared)
        try fixture.mount(["tsl=none"])
        let m = fixture.mountpoint
        let listed = try Shell.run("/bin/ls", ["-a", m + "/.asicfs/status"])
        XCTAssertEqual(listed.stdout.split(separator: "\n").sorted(),
                       [".", "..", "current", "id-card", "last-error", "mobile-id", "smart-id", "smart-id.png"])
        let wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertEqual(wait.status, 0, wait.stderr)
        XCTAssertEqual(wait.stdout, "idle: no signing has run\n")
        let grep = try Shell.run("/bin/grep", ["-r", "-l", "idle", m + "/.asicfs"])
        XCTAssertEqual(grep.status, 0, grep.stderr)
        XCTAssertFalse(grep.stdout.contains("/status/wait"), grep.stdout)

        // A second apart: the same time (the kernel keeps no control file's attributes).
        let files = [m + "/.asicfs/container", m + "/.asicfs/status/current", m + "/.asicfs/README"]
        let before = try Shell.run("/usr/bin/stat", ["-c", "%y %z"] + files)
        usleep(1_100_000)
        let after = try Shell.run("/usr/bin/stat", ["-c", "%y %z"] + files)
        XCTAssertEqual(before.status, 0, before.stderr)
        XCTAssertEqual(before.stdout, after.stdout)

        let tar = try Shell.run("/bin/tar", ["-cf", fixture.folder + "/copy.tar", "-C", m, "."])
        XCTAssertEqual(tar.status, 0, tar.stderr)
        let listing = try Shell.run("/bin/tar", ["-tf", fixture.folder + "/copy.tar"])
        XCTAssertTrue(listing.stdout.contains("./.asicfs/signatures/0-JÕEORG,JAAK-KRISTJAN,38001085718/status"), listing.stdout)
        let excluded = try Shell.run("/bin/tar", ["--exclude=.asicfs", "-cf", fixture.folder + "/data.tar", "-C", m, "."])
        XCTAssertEqual(excluded.status, 0, excluded.stderr)
        XCTAssertEqual(try Shell.run("/bin/tar", ["-tf", fixture.folder + "/data.tar"]).stdout, "./\n./test.txt\n")
        try fixture.unmount()
    }
}

/// A loopback TCP server that takes connections and never answers (a black-holed service):
/// the kernel completes the handshake, a client's request then waits until `release`.
final class HeldServer: @unchecked Sendable {
    private var listener: Int32
    private var accepted: [Int32] = []
    private let lock = NSLock()
    let url: String

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw MountError("cannot listen: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        listener = fd
        url = "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/tl.xml"
    }

    /// Connections made so far (taken off the backlog, still unanswered).
    var acceptedCount: Int {
        lock.withLock {
            while case let fd = accept(listener, nil, nil), fd >= 0 { accepted.append(fd) }
            return accepted.count
        }
    }

    /// Closes every connection and stops listening: clients see the connection end.
    func release() {
        lock.withLock {
            guard listener >= 0 else { return }
            while case let fd = accept(listener, nil, nil), fd >= 0 { accepted.append(fd) }
            for fd in accepted { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
            accepted = []
            close(listener)
            listener = -1
        }
    }
}

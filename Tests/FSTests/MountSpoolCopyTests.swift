import TestTools
import XCTest

/// The first change to a stored data file copies its bytes into a spool (issue 29, item 10):
/// that copy must not stall the rest of the mount. The daemon's hook
/// (ASICFS_TEST_HOLD_SPOOL_COPY) holds the copy of `big.bin` after its first chunk; meanwhile
/// `ls -l` and reading another file must complete. Each runs under `timeout`: a mount that
/// makes them wait for the copy fails them (killed), rather than hanging the test.
final class MountSpoolCopyTests: XCTestCase {
    func testListingAndReadingAnotherFileDoNotWaitForACopyIntoASpool() throws {
        let fixture = try MountFixture(self)
        let big = textLikeBytes(count: 8 << 20, seed: 7)
        try writeFile(big, fixture.folder + "/big.bin")
        try writeFile(Array("small\n".utf8), fixture.folder + "/small.txt")
        let created = try Shell.run(MountFixture.binary, ["create", "-q", fixture.container,
                                                          fixture.folder + "/big.bin", fixture.folder + "/small.txt"])
        XCTAssertEqual(created.status, 0, created.stderr)
        let gate = fixture.folder + "/hold-copy"
        addTeardownBlock { unlink(gate) }
        try fixture.mount(environment: ["ASICFS_TEST_HOLD_SPOOL_COPY": gate])
        try writeFile([], gate)

        let appendOutput = fixture.folder + "/append"
        let appender = try Shell.spawn("/bin/sh", ["-c", "echo x >> \"$1\"", "sh", fixture.path("big.bin")],
                                       stdout: appendOutput, stderr: appendOutput + ".err")
        XCTAssertTrue(eventually(10) { access(gate + ".held", F_OK) == 0 }, "the copy into a spool was not held")

        // While the copy is held: a listing with attributes, a read of another file, a status
        // file and the big file's own attributes all answer.
        let listing = try Shell.run("/usr/bin/timeout", ["-s", "KILL", "5", "ls", "-l", fixture.mountpoint])
        XCTAssertEqual(listing.status, 0, "ls -l waited for the copy: \(listing.stderr)")
        XCTAssertTrue(listing.stdout.contains("small.txt"), listing.stdout)
        let read = try Shell.run("/usr/bin/timeout", ["-s", "KILL", "5", "cat", fixture.path("small.txt")])
        XCTAssertEqual(read.status, 0, "cat waited for the copy: \(read.stderr)")
        XCTAssertEqual(read.stdout, "small\n")
        let status = try Shell.run("/usr/bin/timeout", ["-s", "KILL", "5", "stat", "-c", "%s", fixture.path("big.bin")])
        XCTAssertEqual(status.status, 0, "stat waited for the copy: \(status.stderr)")
        XCTAssertEqual(status.stdout, "\(big.count)\n", "the file shows its stored size until the copy is done")
        XCTAssertEqual(access(gate + ".held", F_OK), 0, "the copy must still be held")

        unlink(gate)
        XCTAssertEqual(Shell.wait(appender), 0, (try? String(contentsOfFile: appendOutput + ".err", encoding: .utf8)) ?? "")
        XCTAssertEqual(try readFile(fixture.path("big.bin")), big + Array("x\n".utf8))
        try fixture.unmount()
        let saved = try containerContents(fixture.container)
        XCTAssertEqual(saved["big.bin"], big + Array("x\n".utf8))
        XCTAssertEqual(saved["small.txt"], Array("small\n".utf8))
    }

    /// Two programs append to the same stored file at once: the second waits for the first
    /// one's copy (the same spool, copied once) and both appends are kept.
    func testTwoWritersOfOneStoredFileShareOneCopy() throws {
        let fixture = try MountFixture(self)
        let big = textLikeBytes(count: 4 << 20, seed: 9)
        try writeFile(big, fixture.folder + "/big.bin")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/big.bin"]).status, 0)
        let gate = fixture.folder + "/hold-copy"
        addTeardownBlock { unlink(gate) }
        try fixture.mount(environment: ["ASICFS_TEST_HOLD_SPOOL_COPY": gate])
        try writeFile([], gate)

        let output = fixture.folder + "/append"
        let first = try Shell.spawn("/bin/sh", ["-c", "echo one >> \"$1\"", "sh", fixture.path("big.bin")],
                                    stdout: output + "1", stderr: output + "1.err")
        XCTAssertTrue(eventually(10) { access(gate + ".held", F_OK) == 0 }, "the copy into a spool was not held")
        let second = try Shell.spawn("/bin/sh", ["-c", "echo two >> \"$1\"", "sh", fixture.path("big.bin")],
                                     stdout: output + "2", stderr: output + "2.err")
        unlink(gate)
        XCTAssertEqual(Shell.wait(first), 0)
        XCTAssertEqual(Shell.wait(second), 0)
        let now = try readFile(fixture.path("big.bin"))
        XCTAssertEqual(Array(now.prefix(big.count)), big)
        XCTAssertEqual(Set([String(decoding: now.dropFirst(big.count), as: UTF8.self)]).isSubset(of: ["one\ntwo\n", "two\none\n"]), true,
                       String(decoding: now.dropFirst(big.count), as: UTF8.self))
        try fixture.unmount()
        XCTAssertEqual(try containerContents(fixture.container)["big.bin"], now)
    }
}

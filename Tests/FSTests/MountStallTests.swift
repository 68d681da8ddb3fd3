import TestTools
import XCTest

/// One slow file must not stall the rest of the mount (issue 29, item 10). The slow step is held
/// with a daemon hook: the copy of a stored data file into a spool at its first change
/// (ASICFS_TEST_HOLD_SPOOL_COPY, after its first chunk), the card I/O of `status/id-card`
/// (ASICFS_TEST_HOLD_CARD_STATUS). Meanwhile other requests must complete; each runs under
/// `timeout`: a mount that makes them wait fails them (killed), rather than hanging the test.
final class MountStallTests: XCTestCase {
    func testListingAndReadingAnotherFileDoNotWaitForACopyIntoASpool() throws {
        let big = textLikeBytes(count: 8 << 20, seed: 7)
        let (fixture, gate) = try mountHoldingSpoolCopies([("big.bin", big), ("small.txt", Array("small\n".utf8))])

        let appendOutput = fixture.folder + "/append"
        let appender = try append("x", to: fixture.path("big.bin"), output: appendOutput)
        waitUntilHeld(gate)

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

    /// Reading `status/id-card` asks the card, which takes seconds: meanwhile the other status
    /// files and the data files answer.
    func testOtherFilesDoNotWaitForTheCardStatus() throws {
        let fixture = try MountFixture(self)
        try writeFile(Array("small\n".utf8), fixture.folder + "/small.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/small.txt"]).status, 0)
        let gate = fixture.folder + "/hold-card"
        addTeardownBlock { unlink(gate) }
        try fixture.mount(environment: ["ASICFS_TEST_HOLD_CARD_STATUS": gate])
        try writeFile([], gate)

        let output = fixture.folder + "/card-status"
        let reader = try Shell.spawn("/bin/cat", [fixture.path(".asicfs/status/id-card")], stdout: output, stderr: output + ".err")
        XCTAssertTrue(eventually(10) { access(gate + ".held", F_OK) == 0 }, "the card status was not held")
        let phone = try Shell.run("/usr/bin/timeout", ["-s", "KILL", "5", "cat", fixture.path(".asicfs/status/mobile-id")])
        XCTAssertEqual(phone.status, 0, "status/mobile-id waited for the card: \(phone.stderr)")
        XCTAssertTrue(phone.stdout.hasPrefix("idle"), phone.stdout)
        let listing = try Shell.run("/usr/bin/timeout", ["-s", "KILL", "5", "ls", "-l", fixture.mountpoint, fixture.path(".asicfs/status")])
        XCTAssertEqual(listing.status, 0, "ls -l waited for the card: \(listing.stderr)")
        let read = try Shell.run("/usr/bin/timeout", ["-s", "KILL", "5", "cat", fixture.path("small.txt")])
        XCTAssertEqual(read.stdout, "small\n", "cat waited for the card: \(read.stderr)")
        XCTAssertEqual(access(gate + ".held", F_OK), 0, "the card status must still be held")

        unlink(gate)
        XCTAssertEqual(Shell.wait(reader), 0, (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? "")
        let status = try String(contentsOfFile: output, encoding: .utf8)
        XCTAssertTrue(status.hasPrefix("idle\n"), status)
        XCTAssertEqual(status.split(separator: "\n").count >= 2, true, status)
        try fixture.unmount()
    }

    /// The file is cut to 0 bytes while its copy runs (`truncate` is not serialized with the
    /// open that copies, unlike a rename or an unlink, which libfuse makes wait for it): the
    /// copy, which holds the old bytes, is not put into the view, and the append goes to the
    /// emptied file.
    func testACopyOfAFileChangedMeanwhileIsDropped() throws {
        let (fixture, gate) = try mountHoldingSpoolCopies([("big.bin", textLikeBytes(count: 4 << 20, seed: 11))])

        let output = fixture.folder + "/append"
        let appender = try append("x", to: fixture.path("big.bin"), output: output)
        waitUntilHeld(gate)
        // truncate(2) by path (truncate(1) opens the file for writing: that waits for the copy).
        let cut = try Shell.run("/usr/bin/timeout", ["-s", "KILL", "5", "/usr/bin/python3", "-c",
                                                     "import os, sys; os.truncate(sys.argv[1], 0)", fixture.path("big.bin")])
        unlink(gate)
        XCTAssertEqual(cut.status, 0, cut.stderr)
        XCTAssertEqual(Shell.wait(appender), 0, (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? "")
        XCTAssertEqual(String(decoding: try readFile(fixture.path("big.bin")).prefix(100), as: UTF8.self), "x\n")
        try fixture.unmount()
        XCTAssertEqual(try containerContents(fixture.container)["big.bin"].map { String(decoding: $0.prefix(100), as: UTF8.self) }, "x\n")
    }

    /// Two programs append to the same stored file at once: the second waits for the first
    /// one's copy (the same spool, copied once) and both appends are kept.
    func testTwoWritersOfOneStoredFileShareOneCopy() throws {
        let big = textLikeBytes(count: 4 << 20, seed: 9)
        let (fixture, gate) = try mountHoldingSpoolCopies([("big.bin", big)])

        let output = fixture.folder + "/append"
        let first = try append("one", to: fixture.path("big.bin"), output: output + "1")
        waitUntilHeld(gate)
        let second = try append("two", to: fixture.path("big.bin"), output: output + "2")
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

    /// A mount of a container of `files` (name, bytes; put in in this order) whose copies into a
    /// spool stop after their first chunk while the file `gate` is there (the daemon makes
    /// `gate.held` when one is held); unlinking `gate` lets them go on.
    private func mountHoldingSpoolCopies(_ files: [(String, [UInt8])]) throws -> (fixture: MountFixture, gate: String) {
        let fixture = try MountFixture(self)
        for (name, bytes) in files { try writeFile(bytes, fixture.folder + "/" + name) }
        let created = try Shell.run(MountFixture.binary, ["create", "-q", fixture.container] + files.map { fixture.folder + "/" + $0.0 })
        XCTAssertEqual(created.status, 0, created.stderr)
        let gate = fixture.folder + "/hold-copy"
        addTeardownBlock { unlink(gate) }
        try fixture.mount(environment: ["ASICFS_TEST_HOLD_SPOOL_COPY": gate])
        try writeFile([], gate)
        return (fixture, gate)
    }

    /// Starts `echo text >> path` in the background (its output and errors go to `output` and `output.err`).
    private func append(_ text: String, to path: String, output: String) throws -> pid_t {
        try Shell.spawn("/bin/sh", ["-c", "echo \(text) >> \"$1\"", "sh", path], stdout: output, stderr: output + ".err")
    }

    private func waitUntilHeld(_ gate: String) {
        XCTAssertTrue(eventually(10) { access(gate + ".held", F_OK) == 0 }, "the copy into a spool was not held")
    }
}

import Foundation
import XCTest

/// A save is atomic: killing `asicfs` at any moment leaves the container byte-identical, and the
/// temporary it leaves behind is removed by the next successful save.
final class CrashSafetyTests: CLITestCase {
    static let bigSize = 300 << 20

    private func temporaries(of container: String) -> [String] {
        let base = (container as NSString).lastPathComponent
        return folderContents((container as NSString).deletingLastPathComponent)
            .filter { $0.hasPrefix(".\(base).asicfs-") && $0.hasSuffix(".tmp") }
    }

    private func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Starts `asicfs add CONTAINER big.bin`, waits for `killWhen` to say so (or for the process to
    /// end, which is a failure), then sends SIGKILL and waits for the process.
    private func addAndKill(_ container: String, _ label: String, killWhen: (Int32) -> Bool) throws {
        let process = try startAsicfs(["add", container, "big.bin"]).process
        let deadline = Date().addingTimeInterval(30)
        var triggered = false
        while process.isRunning && Date() < deadline {
            if killWhen(process.processIdentifier) { triggered = true; break }
            usleep(2_000)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertTrue(triggered, "\(label): the kill point was never reached")
        XCTAssertEqual(process.terminationReason, .uncaughtSignal, "\(label): asicfs ended before it was killed")
        XCTAssertEqual(process.terminationStatus, SIGKILL, label)
    }

    func testKillingAddAtAnyPointLeavesTheContainerByteIdenticalAndTheNextSaveCleansUp() throws {
        let container = path("c.asice")
        try write("a.txt", "alpha\n")
        try write("b.txt", compressibleBytes(count: 200_000))
        assertSuccess(try asicfs(["create", container, "a.txt", "b.txt"]))
        let original = try read(container)
        try writeRandomFile(path("big.bin"), size: Self.bigSize)

        // Fixed delays after the start: before, around and after the save begins.
        for milliseconds in [20, 100, 300] {
            let start = Date()
            try addAndKill(container, "\(milliseconds) ms") { _ in
                Date().timeIntervalSince(start) * 1000 >= Double(milliseconds)
            }
            XCTAssertTrue(try read(container) == original, "container changed after a kill at \(milliseconds) ms")
        }

        // While the temporary is being written: early, and well into the big file.
        for threshold in [1 << 20, 48 << 20] {
            try addAndKill(container, "temporary at \(threshold >> 20) MiB") { pid in
                // Only this process's temporary (those of the killed ones are still around).
                temporaries(of: container).contains {
                    $0.hasPrefix(".c.asice.asicfs-\(pid)-") && size(path($0)) >= threshold
                }
            }
            XCTAssertTrue(try read(container) == original, "container changed after a kill while writing")
            XCTAssertFalse(temporaries(of: container).isEmpty, "the killed save left no temporary (was it killed mid-save?)")
        }
        XCTAssertEqual(try dataFileNames(container), ["a.txt", "b.txt"])

        // The next save removes the temporaries of the dead processes and leaves none of its own.
        try write("c.txt", "charlie\n")
        let result = try asicfs(["add", container, "c.txt"])
        assertSuccess(result)
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(temporaries(of: container), [])
        XCTAssertEqual(folderContents(work.path), ["a.txt", "b.txt", "big.bin", "c.asice", "c.txt"])
        XCTAssertEqual(try dataFileNames(container), ["a.txt", "b.txt", "c.txt"])
        let unzip = try runTool("/usr/bin/env", ["unzip", "-tq", container])
        XCTAssertEqual(unzip.status, 0, unzip.stdout)
        XCTAssertEqual(try asicfs(["extract", container, "a.txt", "-p"]).stdout, "alpha\n")
    }

    func testASourceFileThatGrowsWhileItIsAddedFailsAndLeavesTheContainerAsItWas() throws {
        let container = path("c.asice")
        try write("a.txt", "alpha\n")
        assertSuccess(try asicfs(["create", container, "a.txt"]))
        let original = try read(container)
        try writeRandomFile(path("growing.bin"), size: 32 << 20)

        let (process, stderr) = try startAsicfs(["add", container, "growing.bin"])
        let deadline = Date().addingTimeInterval(30)
        var grown = false
        while process.isRunning && Date() < deadline {
            // Change the file only once its data is being written (its size was taken by then).
            if temporaries(of: container).contains(where: {
                $0.hasPrefix(".c.asice.asicfs-\(process.processIdentifier)-") && size(path($0)) > original.count + (1 << 20)
            }) {
                let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path("growing.bin")))
                try handle.seekToEnd()
                try handle.write(contentsOf: Data("more".utf8))
                try handle.close()
                grown = true
                break
            }
            usleep(1_000)
        }
        process.waitUntilExit()
        XCTAssertTrue(grown, "the save finished before the file could be changed")
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 1)
        let message = String(decoding: try Data(contentsOf: stderr), as: UTF8.self)
        XCTAssertTrue(message.hasPrefix("asicfs: ") && message.contains("growing.bin")
                      && message.contains("changed while it was being added"), message)
        XCTAssertEqual(message.filter { $0 == "\n" }.count, 1, message)
        XCTAssertTrue(try read(container) == original, "the container changed")
        XCTAssertEqual(temporaries(of: container), [], "the failed save left its temporary")
        XCTAssertEqual(try dataFileNames(container), ["a.txt"])
    }

    func testTemporaryOfAProcessThatIsStillAliveIsNotRemoved() throws {
        let container = path("c.asice")
        try write("a.txt", "alpha\n")
        assertSuccess(try asicfs(["create", container, "a.txt"]))
        // Our own pid is alive: its temporary must survive someone else's save; a dead pid's must not.
        let alive = ".c.asice.asicfs-\(getpid())-12345.tmp"
        let dead = try deadPid()
        let stale = ".c.asice.asicfs-\(dead)-777.tmp"
        try write(alive, "in progress")
        try write(stale, "left over")
        try write("b.txt", "bravo\n")
        assertSuccess(try asicfs(["add", container, "b.txt"]))
        XCTAssertEqual(temporaries(of: container), [alive])
        XCTAssertEqual(try read(path(alive)), Data("in progress".utf8))
    }

    /// A pid that belonged to a process which has ended (and was reaped).
    private func deadPid() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }
}

/// Progress goes to stderr only on a terminal; otherwise stderr carries nothing but errors.
final class ProgressOutputTests: CLITestCase {
    /// Progress appears once a save has taken half a second. A save is made that slow with the
    /// test gate that holds it before it writes its data file, not with an input big enough for
    /// this machine (a fast machine would write any reasonable input before the half second).
    static let pastTheProgressDelay: useconds_t = 700_000

    /// Runs `asicfs` (on a pseudo-terminal through script(1) when `onTerminal`) with its save held
    /// at the gate past the progress delay; returns what it wrote to stdout and to stderr.
    func heldSave(_ arguments: [String], onTerminal: Bool) throws -> (status: Int32, stdout: String, stderr: String) {
        let gate = path("gate")
        XCTAssertTrue(FileManager.default.createFile(atPath: gate, contents: nil))
        let command = ([Self.binary] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let started = onTerminal
            ? try startTool("/usr/bin/script", ["-qec", command, "/dev/null"], environment: ["ASICFS_TEST_HOLD_DATA": gate])
            : try startTool(Self.binary, arguments, environment: ["ASICFS_TEST_HOLD_DATA": gate])
        waitForFile(gate + ".held")
        usleep(Self.pastTheProgressDelay)
        unlink(gate)
        started.process.waitUntilExit()
        return (started.process.terminationStatus,
                String(decoding: try read(started.stdout.path), as: UTF8.self),
                String(decoding: try read(started.stderr.path), as: UTF8.self))
    }

    func testASlowSaveWritesNothingToStderrWhenItIsNotATerminal() throws {
        try writeRandomFile(path("random.bin"), size: 8 << 20)
        let container = path("c.asice")
        let created = try heldSave(["create", container, "random.bin"], onTerminal: false)
        XCTAssertEqual(created.status, 0, created.stderr)
        XCTAssertEqual(created.stderr, "", "a held create wrote to stderr")
        XCTAssertEqual(created.stdout, "created \(container) with 1 data file\n")
        try write("a.txt", "alpha\n")
        let added = try heldSave(["add", container, "a.txt"], onTerminal: false)
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertEqual(added.stderr, "", "a held add wrote to stderr")
    }

    func testSuccessfulCommandsWriteNothingToStderrWhenItIsNotATerminal() throws {
        try write("a.txt", "alpha\n")
        let container = path("c.asice")
        try writeRandomFile(path("random.bin"), size: 8 << 20)
        let created = try asicfs(["create", container, "random.bin"])
        assertSuccess(created)
        XCTAssertEqual(created.stderr, "", "create wrote to stderr")

        let out = work.appendingPathComponent("out")
        let commands: [[String]] = [
            ["add", container, "a.txt"],
            ["ls", container],
            ["ls", container, "--json"],
            ["extract", container, "-d", out.path],
            ["extract", container, "random.bin", "-p"],
            ["remove", container, "a.txt"],
            ["add", container, "a.txt", "-q"],
        ]
        for arguments in commands {
            let result = try asicfs(arguments)
            assertSuccess(result)
            XCTAssertEqual(result.stderr, "", "\(arguments) wrote to stderr")
        }
        XCTAssertEqual(try read(out.appendingPathComponent("random.bin").path), try read(path("random.bin")))
    }

    func testProgressAppearsOnATerminalUnlessQuiet() throws {
        // The control for the tests above: on a pseudo-terminal a save held past the delay shows progress.
        try writeRandomFile(path("random.bin"), size: 8 << 20)
        let container = path("one.asice")
        let shown = try heldSave(["create", container, "random.bin"], onTerminal: true)
        XCTAssertEqual(shown.status, 0, shown.stdout + shown.stderr)
        XCTAssertTrue(shown.stdout.contains("\rcreating \(container)"), "no progress line on a terminal: \(shown.stdout.debugDescription)")
        XCTAssertTrue(shown.stdout.contains("MiB"), shown.stdout.debugDescription)
        XCTAssertTrue(shown.stdout.contains("created \(container) with 1 data file"), shown.stdout.debugDescription)

        let quiet = try heldSave(["create", path("two.asice"), "random.bin", "-q"], onTerminal: true)
        XCTAssertEqual(quiet.status, 0, quiet.stdout + quiet.stderr)
        XCTAssertFalse(quiet.stdout.contains("creating"), "progress despite -q: \(quiet.stdout.debugDescription)")
        XCTAssertFalse(quiet.stdout.contains("created"), "-q still printed the summary: \(quiet.stdout.debugDescription)")
    }
}

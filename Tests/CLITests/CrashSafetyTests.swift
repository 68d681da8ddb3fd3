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
    /// Progress appears only once a save has taken half a second, so the input must be big enough
    /// for that on this machine and build: start at 32 MiB and double while the save is quicker.
    static let slowEnough: TimeInterval = 0.7

    func testSuccessfulCommandsWriteNothingToStderrWhenItIsNotATerminal() throws {
        try write("a.txt", "alpha\n")
        let container = path("c.asice")
        var size = 32 << 20
        var elapsed: TimeInterval = 0
        repeat {
            try? FileManager.default.removeItem(atPath: container)
            try writeRandomFile(path("random.bin"), size: size)
            let started = Date()
            let created = try asicfs(["create", container, "random.bin"])
            elapsed = Date().timeIntervalSince(started)
            assertSuccess(created)
            XCTAssertEqual(created.stderr, "", "create wrote to stderr after \(elapsed) s")
            size *= 2
        } while elapsed < Self.slowEnough && size <= 1 << 30
        XCTAssertGreaterThanOrEqual(elapsed, Self.slowEnough, "could not make a save slow enough to show progress")

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
        // The control for the test above: on a pseudo-terminal (script(1)) a slow save shows progress.
        func onTerminal(_ arguments: [String]) throws -> String {
            let command = ([Self.binary] + arguments).map { "'\($0)'" }.joined(separator: " ")
            let result = try runTool("/usr/bin/env", ["script", "-qec", command, "/dev/null"])
            XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
            return result.stdout
        }
        var size = 32 << 20
        while true {
            try writeRandomFile(path("random.bin"), size: size)
            let container = path("one-\(size >> 20).asice")
            let started = Date()
            let shown = try onTerminal(["create", container, "random.bin"])
            let elapsed = Date().timeIntervalSince(started)
            if !shown.contains("\rcreating") && elapsed < Self.slowEnough && size < 1 << 30 {
                size *= 2
                continue
            }
            XCTAssertTrue(shown.contains("\rcreating \(container)"), "no progress line on a terminal: \(shown.debugDescription)")
            XCTAssertTrue(shown.contains("MiB"), shown.debugDescription)
            XCTAssertTrue(shown.contains("created \(container) with 1 data file"), shown.debugDescription)
            break
        }
        let quiet = try onTerminal(["create", path("two.asice"), "random.bin", "-q"])
        XCTAssertFalse(quiet.contains("creating"), "progress despite -q: \(quiet.debugDescription)")
        XCTAssertFalse(quiet.contains("created"), "-q still printed the summary: \(quiet.debugDescription)")
    }
}

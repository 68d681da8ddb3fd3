import Foundation
import XCTest

/// What one run of a program produced.
struct RunResult {
    let status: Int32
    let reason: Process.TerminationReason
    let stdoutData: Data
    let stderrData: Data

    var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
    var stderr: String { String(decoding: stderrData, as: UTF8.self) }
    /// The lines written to stderr (a trailing newline does not start another line).
    var stderrLines: [String] {
        var lines = stderr.components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        return lines
    }
}

struct TestSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Base class of the end-to-end tests: every test gets its own temporary folder, and runs the
/// real `asicfs` binary with its own (empty) XDG_CONFIG_HOME so that nobody's config file leaks in.
class CLITestCase: XCTestCase {
    /// <package root>/Tests/CLITests/CLITestSupport.swift → <package root>.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The binary under test: $ASICFS_BIN, else <package root>/.build/debug/asicfs.
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["ASICFS_BIN"], !path.isEmpty { return path }
        return packageRoot.appendingPathComponent(".build/debug/asicfs").path
    }

    static let awkwardName = "0123456789~#%&()=`@{[]}'.txt"
    static let umlautName = "öäüõ.txt"

    /// The test's own folder; removed afterwards.
    private(set) var root: URL!
    /// The default working directory of every run (inside `root`).
    private(set) var work: URL!
    /// The XDG_CONFIG_HOME every run gets unless the test sets its own.
    private(set) var configHome: URL!
    private var ioFolder: URL!
    private var runCount = 0

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw TestSetupError("asicfs binary not found at \(Self.binary): build it first or set ASICFS_BIN")
        }
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("asicfs-clitests-\(name.filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString)")
        work = root.appendingPathComponent("work")
        configHome = root.appendingPathComponent("config-home")
        ioFolder = root.appendingPathComponent("io")
        for folder in [work!, configHome!, ioFolder!] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
    }

    override func tearDownWithError() throws {
        if let root {
            // Make everything removable again (tests may leave read-only files).
            _ = try? runTool("/bin/chmod", ["-R", "u+rwX", root.path])
            try? FileManager.default.removeItem(at: root)
        }
        try super.tearDownWithError()
    }

    // MARK: - Running programs

    /// Runs `asicfs` with `arguments` in `work` (or `directory`) and waits for it.
    @discardableResult
    func asicfs(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
                timeout: TimeInterval = 60) throws -> RunResult {
        try runTool(Self.binary, arguments, in: directory, environment: environment, timeout: timeout)
    }

    /// Runs any program with stdin from /dev/null and stdout/stderr captured through files
    /// (so that big outputs can never block on a full pipe).
    @discardableResult
    func runTool(_ executable: String, _ arguments: [String], in directory: URL? = nil,
                 environment: [String: String] = [:], timeout: TimeInterval = 60) throws -> RunResult {
        let process = try makeProcess(executable, arguments, in: directory, environment: environment)
        let (outURL, errURL) = try attachOutput(to: process)
        try process.run()
        let timedOut = Locked(false)
        let watchdog = DispatchWorkItem { [pid = process.processIdentifier] in
            timedOut.set(true)
            kill(pid, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        process.waitUntilExit()
        watchdog.cancel()
        if timedOut.get() { XCTFail("\(executable) \(arguments) did not finish within \(timeout) s") }
        return RunResult(status: process.terminationStatus, reason: process.terminationReason,
                         stdoutData: try Data(contentsOf: outURL), stderrData: try Data(contentsOf: errURL))
    }

    /// Starts `asicfs` without waiting (the caller must `waitUntilExit()`); returns the process
    /// and the file its stderr goes to.
    func startAsicfs(_ arguments: [String], in directory: URL? = nil) throws -> (process: Process, stderr: URL) {
        let started = try startTool(Self.binary, arguments, in: directory)
        return (started.process, started.stderr)
    }

    /// Starts any program without waiting (the caller must `waitUntilExit()`); returns the
    /// process and the files its stdout and stderr go to.
    func startTool(_ executable: String, _ arguments: [String], in directory: URL? = nil,
                   environment: [String: String] = [:]) throws -> (process: Process, stdout: URL, stderr: URL) {
        let process = try makeProcess(executable, arguments, in: directory, environment: environment)
        let (outURL, errURL) = try attachOutput(to: process)
        try process.run()
        return (process, outURL, errURL)
    }

    /// Waits until `path` exists, at most `seconds`.
    func waitForFile(_ path: String, seconds: Double = 30, file: StaticString = #filePath, line: UInt = #line) {
        let deadline = Date().addingTimeInterval(seconds)
        while access(path, F_OK) != 0 {
            guard Date() < deadline else { return XCTFail("\(path) did not appear within \(seconds) s", file: file, line: line) }
            usleep(5_000)
        }
    }

    private func makeProcess(_ executable: String, _ arguments: [String], in directory: URL?,
                             environment: [String: String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = directory ?? work
        var env = ProcessInfo.processInfo.environment
        env["XDG_CONFIG_HOME"] = configHome.path
        // Hermetic: no system-wide /etc/asicfs/config of the machine running the tests.
        env["ASICFS_SYSTEM_CONFIG"] = configHome.appendingPathComponent("system-config").path
        env.removeValue(forKey: "ASICFS_BIN")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        return process
    }

    private func attachOutput(to process: Process) throws -> (URL, URL) {
        runCount += 1
        let outURL = ioFolder.appendingPathComponent("\(runCount).out")
        let errURL = ioFolder.appendingPathComponent("\(runCount).err")
        for url in [outURL, errURL] {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                throw TestSetupError("cannot create \(url.path)")
            }
        }
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        return (outURL, errURL)
    }

    // MARK: - Files

    func path(_ name: String) -> String { work.appendingPathComponent(name).path }

    @discardableResult
    func write(_ name: String, _ data: Data, in folder: URL? = nil) throws -> String {
        let url = (folder ?? work).appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
        return url.path
    }

    @discardableResult
    func write(_ name: String, _ text: String, in folder: URL? = nil) throws -> String {
        try write(name, Data(text.utf8), in: folder)
    }

    func read(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    /// Deterministic bytes that deflate compresses (a small alphabet, no long repeats).
    func compressibleBytes(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> Data {
        var state = seed
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            var word = state
            for _ in 0..<8 where index < count {
                bytes[index] = 0x41 &+ UInt8(word & 0x0F)
                word >>= 8
                index += 1
            }
        }
        return Data(bytes)
    }

    /// Random bytes from /dev/urandom, written in chunks straight to `path`.
    func writeRandomFile(_ path: String, size: Int) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let output = FileHandle(forWritingAtPath: path),
              let random = FileHandle(forReadingAtPath: "/dev/urandom") else {
            throw TestSetupError("cannot write \(path)")
        }
        defer { try? output.close(); try? random.close() }
        var left = size
        while left > 0 {
            let chunk = try random.read(upToCount: min(left, 8 << 20)) ?? Data()
            guard !chunk.isEmpty else { throw TestSetupError("/dev/urandom gave nothing") }
            try output.write(contentsOf: chunk)
            left -= chunk.count
        }
    }

    func setModificationTime(_ path: String, _ date: Date) throws {
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
    }

    /// Seconds part of a file's mtime (lstat, so links are not followed).
    func modificationSeconds(_ path: String) throws -> Int {
        var st = stat()
        guard lstat(path, &st) == 0 else { throw TestSetupError("cannot stat \(path)") }
        return Int(st.st_mtim.tv_sec)
    }

    func isSymbolicLink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK
    }

    func folderContents(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    /// Everything below `folder`, as relative paths, sorted.
    func tree(_ folder: String) -> [String] {
        (FileManager.default.subpaths(atPath: folder) ?? []).sorted()
    }

    // MARK: - Container inspection

    /// `asicfs ls --json`, parsed.
    func listing(_ container: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let result = try asicfs(["ls", container, "--json"])
        XCTAssertEqual(result.status, 0, "ls --json failed: \(result.stderr)", file: file, line: line)
        XCTAssertEqual(result.stderr, "", file: file, line: line)
        guard let object = try JSONSerialization.jsonObject(with: result.stdoutData) as? [String: Any] else {
            throw TestSetupError("ls --json did not print a JSON object: \(result.stdout)")
        }
        return object
    }

    func dataFiles(of listing: [String: Any]) -> [[String: Any]] {
        listing["data_files"] as? [[String: Any]] ?? []
    }

    func dataFileNames(_ container: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        dataFiles(of: try listing(container, file: file, line: line)).compactMap { $0["name"] as? String }
    }

    /// Builds an ASiC-E container with Python's zipfile (mimetype first and stored, then the
    /// files, then the manifest): containers with names the CLI cannot produce (subfolders).
    func makeContainerWithPython(_ path: String, files: [(name: String, content: String)], compress: Bool = true) throws {
        let spec = try JSONSerialization.data(withJSONObject: files.map { ["name": $0.name, "content": $0.content] })
        let specPath = try write("python-spec-\(UUID().uuidString).json", spec, in: root)
        let script = """
        import json, sys, zipfile
        from xml.sax.saxutils import quoteattr
        files = json.load(open(sys.argv[2], encoding='utf-8'))
        with zipfile.ZipFile(sys.argv[1], 'w') as z:
            z.writestr(zipfile.ZipInfo('mimetype'), 'application/vnd.etsi.asic-e+zip')
            for f in files:
                z.writestr(f['name'], f['content'].encode('utf-8'),
                           compress_type=zipfile.ZIP_DEFLATED if sys.argv[3] == 'deflate' else zipfile.ZIP_STORED)
            entries = ''.join('<manifest:file-entry manifest:full-path=%s manifest:media-type="text/plain"/>'
                              % quoteattr(f['name']) for f in files)
            z.writestr('META-INF/manifest.xml', '<?xml version="1.0" encoding="UTF-8"?>'
                '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
                '<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"/>'
                + entries + '</manifest:manifest>', compress_type=zipfile.ZIP_DEFLATED)
        """
        let result = try runTool("/usr/bin/env", ["python3", "-c", script, path, specPath, compress ? "deflate" : "store"])
        guard result.status == 0 else { throw TestSetupError("python3 failed: \(result.stderr)") }
    }

    /// Opens `container` with Python's zipfile and reports what it sees.
    func inspectWithPython(_ container: String) throws -> [String: Any] {
        let script = """
        import json, sys, zipfile
        import xml.etree.ElementTree as ET
        NS = '{urn:oasis:names:tc:opendocument:xmlns:manifest:1.0}'
        with zipfile.ZipFile(sys.argv[1]) as z:
            infos = z.infolist()
            first = infos[0]
            manifest = ET.fromstring(z.read('META-INF/manifest.xml'))
            entries = [(e.get(NS + 'full-path'), e.get(NS + 'media-type')) for e in manifest.iter(NS + 'file-entry')]
            print(json.dumps({
                'names': z.namelist(),
                'first': first.filename,
                'firstStored': first.compress_type == zipfile.ZIP_STORED,
                'firstExtraLength': len(first.extra),
                'mimetype': z.read('mimetype').decode('ascii'),
                'manifest': [{'path': p, 'mediaType': t} for p, t in entries],
                'bad': z.testzip(),
                'sizes': {i.filename: i.file_size for i in infos},
            }))
        """
        let result = try runTool("/usr/bin/env", ["python3", "-c", script, container])
        guard result.status == 0,
              let object = try JSONSerialization.jsonObject(with: result.stdoutData) as? [String: Any] else {
            throw TestSetupError("python3 zipfile could not read \(container): \(result.stderr)")
        }
        return object
    }

    /// Runs `asicfs ARGUMENTS` on a pty and plays `script`:
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

    /// Asserts that `command` failed with exit 1 and exactly one "asicfs: " line on stderr
    /// that contains every one of `words`.
    func assertFailure(_ result: RunResult, status: Int32 = 1, mentions words: [String],
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.status, status, "stderr: \(result.stderr)", file: file, line: line)
        XCTAssertEqual(result.reason, .exit, file: file, line: line)
        XCTAssertEqual(result.stderrLines.count, 1, "expected one line on stderr, got: \(result.stderr)",
                       file: file, line: line)
        let message = result.stderrLines.first ?? ""
        XCTAssertTrue(message.hasPrefix("asicfs: "), "stderr: \(message)", file: file, line: line)
        for word in words {
            XCTAssertTrue(message.contains(word), "'\(word)' missing in: \(message)", file: file, line: line)
        }
    }

    /// Fails unless `data` is free of C0 controls (line feeds only between lines when allowed,
    /// else only the final one), DEL, C1 controls and bidirectional controls.
    func assertPrintable(_ data: Data, allowingNewlines: Bool, file: StaticString = #filePath, line: UInt = #line) {
        var text = String(decoding: data, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        let bad = text.unicodeScalars.filter { scalar in
            if scalar == "\n" { return !allowingNewlines }
            switch scalar.value {
            case 0..<0x20, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
            default: return false
            }
        }
        XCTAssertTrue(bad.isEmpty, "raw control characters \(bad.map { String($0.value, radix: 16) }) in: \(text)",
                      file: file, line: line)
    }

    func assertSuccess(_ result: RunResult, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.status, 0, "stderr: \(result.stderr)", file: file, line: line)
        XCTAssertEqual(result.reason, .exit, file: file, line: line)
    }
}

/// A value shared with a watchdog thread.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.lock(); defer { lock.unlock() }; return value }
    func set(_ newValue: Value) { lock.lock(); value = newValue; lock.unlock() }
}

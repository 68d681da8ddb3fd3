import Foundation
import XCTest

/// A real mount of a container by the built `asicfs` binary, in the foreground as a child
/// process, on a private mountpoint; always unmounted and waited for when the test ends.
final class MountFixture {
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    static var binary: String {
        ProcessInfo.processInfo.environment["ASICFS_BIN"] ?? packageRoot + "/.build/debug/asicfs"
    }

    static func corpusFile(_ name: String) -> String { packageRoot + "/Tests/Fixtures/libdigidocpp/" + name }

    let folder: String
    let container: String
    let mountpoint: String
    private(set) var process: Process?
    private var stderrPipe = Pipe()

    /// A fresh folder with `container.asice` path and an empty `mnt/` (nothing mounted yet).
    init(_ test: XCTestCase, folder: String? = nil) throws {
        let base = folder ?? NSTemporaryDirectory() + "asicfs-fs-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: base + "/mnt", withIntermediateDirectories: true)
        self.folder = base
        container = base + "/container.asice"
        mountpoint = base + "/mnt"
        test.addTeardownBlock { [self] in
            self.stop()
            if folder == nil { try? FileManager.default.removeItem(atPath: base) }
        }
    }

    /// Mounts in the foreground (`-f`) and waits until the kernel shows the mount.
    func mount(_ options: [String] = [], container: String? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["mount", container ?? self.container, mountpoint, "-f"] + options.flatMap { ["-o", $0] }
        stderrPipe = Pipe()
        process.standardError = stderrPipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(10)
        while !isMounted {
            if !process.isRunning {
                process.waitUntilExit()
                throw MountError("mount exited \(process.terminationStatus): \(stderrText)")
            }
            if Date() > deadline { throw MountError("mount did not appear in 10 s") }
            usleep(10_000)
        }
    }

    var stderrText: String {
        String(decoding: stderrPipe.fileHandleForReading.availableDataOrEmpty, as: UTF8.self)
    }

    var isMounted: Bool {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return false }
        return table.split(separator: "\n").contains { $0.split(separator: " ").dropFirst(4).first.map(String.init) == mountpoint }
    }

    /// Unmounts with `asicfs umount` (which waits for the daemon to save) and reaps the process.
    func unmount() throws {
        let result = try Shell.run(Self.binary, ["umount", mountpoint])
        guard result.status == 0 else { throw MountError("umount failed: \(result.stderr)") }
        process?.waitUntilExit()
        process = nil
    }

    func stop() {
        if isMounted { _ = try? Shell.run("fusermount3", ["-u", "-z", mountpoint]) }
        if let process, process.isRunning { process.terminate() }
        process?.waitUntilExit()
        process = nil
    }

    func path(_ name: String) -> String { mountpoint + "/" + name }
}

struct MountError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension FileHandle {
    /// What is in the pipe now, without blocking when the writer is still running.
    var availableDataOrEmpty: Data {
        let flags = fcntl(fileDescriptor, F_GETFL)
        _ = fcntl(fileDescriptor, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(fileDescriptor, F_SETFL, flags) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = Glibc.read(fileDescriptor, &buffer, buffer.count)
            if n <= 0 { break }
            data.append(contentsOf: buffer[0..<n])
        }
        return data
    }
}

/// Runs programs (real shell tools against the mount) and waits for them.
enum Shell {
    struct Output {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    @discardableResult
    static func run(_ program: String, _ arguments: [String]) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program.hasPrefix("/") ? program : "/usr/bin/env")
        process.arguments = program.hasPrefix("/") ? arguments : [program] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }

    /// `sh -c script`, for pipelines of real tools.
    @discardableResult
    static func sh(_ script: String) throws -> Output { try run("/bin/sh", ["-c", script]) }

    static func python(_ code: String, _ args: [String] = []) throws -> Output {
        try run("/usr/bin/python3", ["-c", code] + args)
    }
}

/// Deterministic text-like bytes (compress about 3:1).
func textLikeBytes(count: Int, seed: UInt64 = 7) -> [UInt8] {
    let words = ["mount", "container", "the", "of", "signature", "folder", "data", "file", "Tartu", "2026"]
    var state = seed
    var out: [UInt8] = []
    out.reserveCapacity(count + 16)
    while out.count < count {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        out.append(contentsOf: words[Int(state >> 33) % words.count].utf8)
        out.append((state >> 20) & 15 == 0 ? 0x0A : 0x20)
    }
    return Array(out.prefix(count))
}

func readFile(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

func writeFile(_ bytes: [UInt8], _ path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

/// The container's data files and their bytes, read with Python's zipfile (an independent reader).
func containerContents(_ path: String) throws -> [String: [UInt8]] {
    let result = try Shell.python("""
        import zipfile, sys, json, base64, xml.etree.ElementTree as ET
        z = zipfile.ZipFile(sys.argv[1])
        assert z.testzip() is None, 'CRC'
        assert z.infolist()[0].filename == 'mimetype'
        ns = '{urn:oasis:names:tc:opendocument:xmlns:manifest:1.0}'
        listed = [e.get(ns + 'full-path') for e in ET.fromstring(z.read('META-INF/manifest.xml'))][1:]
        files = [n for n in z.namelist() if n != 'mimetype' and not n.startswith('META-INF/')]
        assert sorted(listed) == sorted(files), (listed, files)
        print(json.dumps({n: base64.b64encode(z.read(n)).decode() for n in files}))
        """, [path])
    guard result.status == 0 else { throw MountError("python: \(result.stderr)") }
    let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: String]
    return object.mapValues { [UInt8](Data(base64Encoded: $0)!) }
}

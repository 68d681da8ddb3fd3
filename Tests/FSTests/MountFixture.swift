import Foundation
import TestTools
import XCTest

/// A real mount of a container by the built `asicfs` binary, in the foreground as a child
/// process, on a private mountpoint; always unmounted and waited for when the test ends.
final class MountFixture {
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The binary under test: $ASICFS_BIN, else the `asicfs` built with these tests (beside the
    /// test executable, whatever --scratch-path), else <package root>/.build/debug/asicfs.
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["ASICFS_BIN"], !path.isEmpty { return path }
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let beside = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("asicfs").path
            if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        }
        return packageRoot + "/.build/debug/asicfs"
    }()

    /// The text of the one data file, test.txt, of `makeSigned`.
    static let signedText = Data("signed text\n".utf8)

    /// A container at `path` holding test.txt, signed (LT) with the test PKI by the binary under test.
    static func makeSigned(_ path: String, _ shared: SharedTestServices) throws {
        guard let services = shared.services else { throw ShellError("the loopback TSA/OCSP services: \(shared.failure ?? "")") }
        try SignedTestContainers.make(path, files: [("test.txt", signedText)], binary: binary, services: services)
    }

    /// An ASiC-S at `path` of one data file, time-stamped by the loopback TSA.
    static func makeTimeStamped(_ path: String, _ shared: SharedTestServices, dataFile: String = "test1.txt",
                                data: Data = TestContainers.payload) throws {
        guard let services = shared.services else { throw ShellError("the loopback TSA: \(shared.failure ?? "")") }
        let token = try TestContainers.timeStampToken(over: data, tsaURL: services.tsaURL, in: shared.folder)
        try TestContainers.timeStamped(path, dataFile: dataFile, data: data, token: token)
    }

    let folder: String
    let container: String
    let mountpoint: String
    /// The foreground daemon, while it runs.
    private(set) var pid: pid_t?
    private var stderrFile = ""

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

    /// Mounts in the foreground (`-f`) and waits until the kernel shows the mount. `environment`
    /// is added to the daemon's (test hooks such as ASICFS_TEST_HOLD_SAVES).
    func mount(_ options: [String] = [], container: String? = nil, environment: [String: String] = [:]) throws {
        stderrFile = NSTemporaryDirectory() + "asicfs-mount-\(getpid())-\(UUID().uuidString.prefix(8)).err"
        let arguments = ["mount", container ?? self.container, mountpoint, "-f"] + options.flatMap { ["-o", $0] }
        let pid = try Shell.spawn(Self.binary, arguments, stdout: "/dev/null", stderr: stderrFile, environment: environment)
        self.pid = pid
        let deadline = Date().addingTimeInterval(10)
        while !isMounted {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                self.pid = nil
                throw MountError("mount exited: \(stderrText)")
            }
            if Date() > deadline { throw MountError("mount did not appear in 10 s") }
            usleep(10_000)
        }
    }

    var stderrText: String { (try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? "" }

    var isMounted: Bool {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return false }
        return table.split(separator: "\n").contains { $0.split(separator: " ").dropFirst(4).first.map(String.init) == mountpoint }
    }

    /// Sends a signal to the foreground daemon and waits for it; returns its exit status.
    @discardableResult
    func signal(_ signal: Int32) -> Int32? {
        guard let pid else { return nil }
        kill(pid, signal)
        self.pid = nil
        return Shell.wait(pid)
    }

    /// Unmounts with `asicfs umount` (which waits for the daemon to save) and reaps the daemon.
    func unmount() throws {
        let result = try Shell.run(Self.binary, ["umount", mountpoint])
        guard result.status == 0 else { throw MountError("umount failed: \(result.stderr)") }
        if let pid { _ = Shell.wait(pid) }
        pid = nil
    }

    /// After an unmount by other means (`asicfs umount` run by the test): waits (at most
    /// `timeout` seconds) for the daemon to exit and returns its exit status; nil if it did not.
    func reap(timeout: TimeInterval = 10) -> Int32? {
        guard let pid else { return nil }
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while Date() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid {
                self.pid = nil
                return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            }
            usleep(20_000)
        }
        return nil
    }

    func stop() {
        if isMounted { _ = try? Shell.run("fusermount3", ["-u", "-z", mountpoint]) }
        if let pid {
            kill(pid, SIGTERM)
            _ = Shell.wait(pid)
        }
        pid = nil
        if !stderrFile.isEmpty { unlink(stderrFile) }
    }

    func path(_ name: String) -> String { mountpoint + "/" + name }
}

struct MountError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func readFile(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

func writeFile(_ bytes: [UInt8], _ path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

/// A signature's `status` or `report` once validated: it reads "checking" until the background
/// validation has ended (a read never waits for it), so this reads again until it has.
func validatedText(_ path: String, timeout: TimeInterval = 60) throws -> String {
    let deadline = Date().addingTimeInterval(timeout)
    var text = try String(contentsOfFile: path, encoding: .utf8)
    while text.hasPrefix("checking\n") && Date() < deadline {
        usleep(20_000)
        text = try String(contentsOfFile: path, encoding: .utf8)
    }
    return text
}

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

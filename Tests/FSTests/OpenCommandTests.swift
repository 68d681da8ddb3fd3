import Foundation
import TestTools
import XCTest

/// `asicfs open` and `close` as the desktop uses them (xdg-open and notify-send faked): read-only
/// storage, failures (a notification, nothing left behind), what open prints, a deleted container.
final class OpenCommandTests: XCTestCase {
    /// A folder with a fake desktop: `runtime/` as XDG_RUNTIME_DIR, xdg-open and notify-send
    /// that log their arguments.
    struct Desktop {
        let folder: String
        var runtime: String { folder + "/runtime" }
        var notifications: String { folder + "/bin/notify-send.log" }
        var environment: [String: String] {
            ["XDG_RUNTIME_DIR": runtime, "DISPLAY": ":99",
             "PATH": folder + "/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
        }

        init(_ folder: String) throws {
            self.folder = folder
            try FileManager.default.createDirectory(atPath: folder + "/bin", withIntermediateDirectories: true)
            for name in ["xdg-open", "notify-send"] {
                let log = folder + "/bin/\(name).log"
                try writeFile(Array("#!/bin/sh\nprintf '%s\\n' \"$*\" >> '\(log)'\n".utf8), folder + "/bin/" + name)
                chmod(folder + "/bin/" + name, 0o755)
            }
        }

        func run(_ arguments: [String]) throws -> Shell.Output {
            try Shell.run(MountFixture.binary, arguments, environment: environment)
        }

        func notified() -> String { (try? String(contentsOfFile: notifications, encoding: .utf8)) ?? "" }

        /// What is under `$XDG_RUNTIME_DIR/asicfs/` (open's folders).
        func openFolders() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: runtime + "/asicfs")) ?? [] }
    }

    /// Unmounts whatever open mounted under `desktop` when the test ends, then removes `folder`
    /// (the fixture's own removal may come first, and fails while those mounts are there).
    func cleanUp(_ desktop: Desktop, removing folder: String) {
        addTeardownBlock {
            for name in desktop.openFolders() {
                let mounted = desktop.runtime + "/asicfs/" + name
                if (try? Shell.run(MountFixture.binary, ["umount", mounted]))?.status != 0 {
                    _ = try? Shell.run("fusermount3", ["-u", "-z", mounted])
                }
            }
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    func makeContainer(_ path: String, _ files: [String: String]) throws {
        let sources = PathNames.parent(path) + "/sources-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: sources, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: sources) }
        let paths = try files.sorted(by: { $0.key < $1.key }).map { name, text in
            try writeFile(Array(text.utf8), sources + "/" + name)
            return sources + "/" + name
        }
        let created = try Shell.run(MountFixture.binary, ["create", "-q", path] + paths)
        XCTAssertEqual(created.status, 0, created.stderr)
    }

    func testAContainerOnReadOnlyStorageOpensReadOnly() throws {
        let fixture = try MountFixture(self)
        let desktop = try Desktop(fixture.folder + "/desktop")
        cleanUp(desktop, removing: fixture.folder)
        let storage = fixture.folder + "/storage"
        try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
        XCTAssertEqual(try Shell.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", storage]).status, 0)
        addTeardownBlock { _ = try? Shell.run("/bin/umount", ["-l", storage]) }
        try makeContainer(storage + "/card.asice", ["a.txt": "a\n"])
        let remounted = try Shell.run("/bin/mount", ["-o", "remount,ro", storage])
        XCTAssertEqual(remounted.status, 0, remounted.stderr)

        let opened = try desktop.run(["open", storage + "/card.asice"])
        XCTAssertEqual(opened.status, 0, opened.stderr)
        let folder = desktop.runtime + "/asicfs/card.asice"
        XCTAssertEqual(opened.stdout, folder + "\n")
        XCTAssertTrue(opened.stderr.contains("cannot be written (Read-only file system): opening it read-only"), opened.stderr)
        XCTAssertEqual(try String(contentsOfFile: folder + "/a.txt", encoding: .utf8), "a\n")
        let summary = try String(contentsOfFile: folder + "/.asicfs/container", encoding: .utf8)
        XCTAssertTrue(summary.contains("state: read-only (\(storage)/card.asice cannot be written: Read-only file system)"), summary)
        let write = try Shell.sh("echo b > '\(folder)/b.txt'")
        XCTAssertTrue(write.stderr.contains("Read-only file system"), write.stderr)
        let closed = try desktop.run(["close", storage + "/card.asice"])
        XCTAssertEqual(closed.status, 0, closed.stderr)
        XCTAssertEqual(desktop.openFolders(), [])
    }

    func testEveryFailedOpenIsANotificationAndLeavesNothingBehind() throws {
        let fixture = try MountFixture(self)
        let desktop = try Desktop(fixture.folder + "/desktop")
        cleanUp(desktop, removing: fixture.folder)
        let beside = fixture.folder + "/files"
        try FileManager.default.createDirectory(atPath: beside, withIntermediateDirectories: true)
        try writeFile(Array("not a zip file at all".utf8), beside + "/broken.asice")

        let broken = try desktop.run(["open", beside + "/broken.asice"])
        XCTAssertEqual(broken.status, 1, broken.stdout)
        XCTAssertTrue(broken.stderr.hasPrefix("asicfs: "), broken.stderr)
        XCTAssertTrue(eventually { desktop.notified().contains("cannot open broken.asice") }, desktop.notified())
        XCTAssertEqual(desktop.openFolders(), [], "a failed open leaves no folder")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: beside), ["broken.asice"])

        let missing = try desktop.run(["open", beside + "/missing.asice"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(eventually { desktop.notified().contains("cannot open missing.asice") }, desktop.notified())
        XCTAssertEqual(desktop.openFolders(), [])

        // Refused before anything is tried: a setting that does not exist.
        let setting = try desktop.run(["open", beside + "/broken.asice", "-o", "no-such-setting=1"])
        XCTAssertEqual(setting.status, 2, setting.stderr)
        XCTAssertTrue(eventually { desktop.notified().split(separator: "\n").filter { $0.contains("cannot open broken.asice") }.count == 2 },
                      desktop.notified())
    }

    /// One line, the folder's real path, whatever control characters the container's name has.
    func testOpenPrintsTheFolderOnOneLineAndSaysWhenItBrowses() throws {
        let fixture = try MountFixture(self)
        let desktop = try Desktop(fixture.folder + "/desktop")
        cleanUp(desktop, removing: fixture.folder)
        let name = "tab\there\\back\nline.asice"
        try makeContainer(fixture.folder + "/" + name, ["a.txt": "a\n"])
        let opened = try desktop.run(["open", fixture.folder + "/" + name, "--no-file-manager"])
        XCTAssertEqual(opened.status, 0, opened.stderr)
        let lines = opened.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 2, opened.stdout)
        XCTAssertEqual(String(lines[0]), desktop.runtime + "/asicfs/tab\\there\\back\\nline.asice")
        XCTAssertEqual(try String(contentsOfFile: String(lines[0]) + "/a.txt", encoding: .utf8), "a\n")
        XCTAssertEqual(opened.stderr, "")

        let tree = fixture.folder + "/tree"
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        let browsed = try desktop.run(["open", tree, "--no-file-manager"])
        XCTAssertEqual(browsed.status, 0, browsed.stderr)
        XCTAssertEqual(browsed.stdout, desktop.runtime + "/asicfs/tree\n")
        XCTAssertEqual(browsed.stderr, "asicfs: \(tree) is a folder: opening it in browse mode (every container in it shows as a folder)\n")
    }

    func testCloseFindsTheMountOfADeletedContainer() throws {
        let fixture = try MountFixture(self)
        let desktop = try Desktop(fixture.folder + "/desktop")
        cleanUp(desktop, removing: fixture.folder)
        try makeContainer(fixture.container, ["a.txt": "a\n"])
        let opened = try desktop.run(["open", fixture.container, "--no-file-manager"])
        XCTAssertEqual(opened.status, 0, opened.stderr)
        XCTAssertEqual(unlink(fixture.container), 0)
        // Relative, as a user in that folder types it.
        let closed = try Shell.run("/bin/sh", ["-c", "cd '\(fixture.folder)' && exec '\(MountFixture.binary)' close container.asice"],
                                   environment: desktop.environment)
        XCTAssertEqual(closed.status, 0, closed.stderr)
        XCTAssertEqual(desktop.openFolders(), [])
    }
}

/// Smaller command-line rules: the lock message names the daemon, a used mount point is
/// refused, a signing request's role cannot hold control characters, a passphrase file that is
/// a folder says so.
final class CommandLineDetailTests: XCTestCase {
    /// The pid of the running `asicfs mount … MOUNTPOINT` daemon, found by its command line.
    func daemon(mounting mountpoint: String) -> Int32? {
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return processes.compactMap(Int32.init).first { pid in
            guard let line = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")) else { return false }
            let arguments = line.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return arguments.contains("mount") && arguments.last == mountpoint
        }
    }

    func testTheLockMessageNamesTheDaemonNotTheProcessThatStartedIt() throws {
        let fixture = try MountFixture(self)
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container]).status, 0)
        let mounted = try Shell.run(MountFixture.binary, ["mount", fixture.container, fixture.mountpoint])
        XCTAssertEqual(mounted.status, 0, mounted.stderr)
        addTeardownBlock { _ = try? Shell.run(MountFixture.binary, ["umount", fixture.mountpoint]) }
        let pid = try XCTUnwrap(daemon(mounting: fixture.mountpoint))
        try writeFile(Array("x".utf8), fixture.folder + "/x.txt")
        let added = try Shell.run(MountFixture.binary, ["add", fixture.container, fixture.folder + "/x.txt"])
        XCTAssertEqual(added.status, 1)
        XCTAssertTrue(added.stderr.contains("it is mounted at \(fixture.mountpoint) by asicfs (pid \(pid))"), "daemon \(pid): \(added.stderr)")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["umount", fixture.mountpoint]).status, 0)
    }

    func testAMountPointThatIsNotEmptyOrInUseIsRefusedUnlessNonempty() throws {
        let fixture = try MountFixture(self)
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container]).status, 0)
        try writeFile(Array("mine".utf8), fixture.mountpoint + "/mine.txt")
        // Not -f: were it accepted, the test must not wait for it.
        let refused = try Shell.run(MountFixture.binary, ["mount", fixture.container, fixture.mountpoint])
        if refused.status == 0 { _ = try Shell.run(MountFixture.binary, ["umount", fixture.mountpoint]) }
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderr, "asicfs: cannot mount on \(fixture.mountpoint): the folder is not empty "
                       + "(a mount would hide its files; use an empty folder, or -o nonempty)\n")
        try fixture.mount(["nonempty"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.mountpoint), [".asicfs"])
        try fixture.unmount()
        XCTAssertEqual(try String(contentsOfFile: fixture.mountpoint + "/mine.txt", encoding: .utf8), "mine")

        let used = fixture.folder + "/used"
        try FileManager.default.createDirectory(atPath: used, withIntermediateDirectories: true)
        XCTAssertEqual(try Shell.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", used]).status, 0)
        addTeardownBlock { _ = try? Shell.run("/bin/umount", ["-l", used]) }
        let over = try Shell.run(MountFixture.binary, ["mount", fixture.container, used])
        if over.status == 0 { _ = try Shell.run(MountFixture.binary, ["umount", used]) }
        XCTAssertEqual(over.status, 1)
        XCTAssertTrue(over.stderr.contains("something is mounted there already"), over.stderr)
    }

    /// The role goes into the signature's XML: a control character is refused with the request
    /// (EINVAL, reason in last-error), not after the signing has started.
    func testARoleWithAControlCharacterIsRefusedWithTheRequest() throws {
        let fixture = try MountFixture(self)
        try fixture.mount(["create", "tsl=none"])
        let request = fixture.path(".asicfs/sign/pkcs12")
        // One write, as echo does it; python names the errno the write failed with.
        let written = try Shell.python("""
            import os, sys, errno
            fd = os.open(sys.argv[1], os.O_WRONLY)
            try:
                os.write(fd, b'file=/nonexistent.p12 passphrase-file=/nonexistent role=a\\x07b\\n')
            except OSError as e:
                print(errno.errorcode[e.errno])
            """, [request])
        XCTAssertEqual(written.stdout, "EINVAL\n", written.stderr)
        let error = try String(contentsOfFile: fixture.path(".asicfs/status/last-error"), encoding: .utf8)
        XCTAssertTrue(error.contains("role= cannot hold the control character \\x07"), error)
        XCTAssertEqual(try String(contentsOfFile: fixture.path(".asicfs/status/current"), encoding: .utf8), "idle\n")
        try fixture.unmount()
    }

    func testAPassphraseFileThatIsAFolderSaysSo() throws {
        let fixture = try MountFixture(self)
        let pki = try TestPKI.make(in: fixture.folder + "/pki", ocspURL: "http://127.0.0.1:9/ocsp")
        try writeFile(Array("a".utf8), fixture.folder + "/a.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/a.txt"]).status, 0)
        let signed = try Shell.run(MountFixture.binary, ["sign", fixture.container, "--method", "pkcs12", "file=\(pki.signerP12)",
                                                         "passphrase-file=\(fixture.folder)", "-o", "tsl=none"])
        XCTAssertEqual(signed.status, 1)
        XCTAssertTrue(signed.stderr.contains("cannot read the passphrase file \(fixture.folder): it is a folder"), signed.stderr)
    }
}

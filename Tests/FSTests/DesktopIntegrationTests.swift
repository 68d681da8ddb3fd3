import Foundation
import TestTools
import XCTest

/// What a desktop sees: extended attributes with the signature status, `cp -a`/`rsync -aX` out
/// of a mount, `asicfs open`/`close` (xdg-open faked), notifications of a signing in a mount
/// (notify-send faked), and the MIME and desktop files of contrib/desktop.
final class DesktopIntegrationTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "fs-desktop") }
    override class func tearDown() { shared.stop() }

    func services() throws -> TestServices { try XCTUnwrap(Self.shared.services, Self.shared.failure ?? "") }

    func settings() throws -> [String] {
        let services = try services()
        return ["tsl=none", "trust-anchors=\(services.pki.root)", "tsa-url=\(services.tsaURL)", "cache-dir=\(Self.shared.folder)/cache"]
    }

    func passphraseFile() throws -> String {
        let path = Self.shared.folder + "/pass-\(UUID().uuidString.prefix(6))"
        try writeFile(Array((TestPKI.passphrase + "\n").utf8), path)
        return path
    }

    func newContainer(_ fixture: MountFixture) throws {
        try writeFile(Array("a\n".utf8), fixture.folder + "/a.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/a.txt"]).status, 0)
    }

    /// A program on PATH that logs its arguments (and prints `output`).
    func fakeProgram(_ name: String, in folder: String, output: String = "") throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let log = folder + "/\(name).log"
        try writeFile(Array("#!/bin/sh\nprintf '%s\\n' \"$*\" >> '\(log)'\nprintf '\(output)'\n".utf8), folder + "/" + name)
        chmod(folder + "/" + name, 0o755)
        return log
    }

    func testTheSignatureStatusIsAnExtendedAttributeAndCopyingOutKeepsWorking() throws {
        let fixture = try MountFixture(self)
        try newContainer(fixture)
        try fixture.mount(try settings())
        let unsigned = try Shell.run("/usr/bin/getfattr", ["-d", "--absolute-names", fixture.mountpoint])
        XCTAssertEqual(unsigned.status, 0, unsigned.stderr)
        XCTAssertTrue(unsigned.stdout.contains("user.asicfs.status=\"unsigned\""), unsigned.stdout)
        XCTAssertTrue(unsigned.stdout.contains("user.asicfs.signers=\"\""), unsigned.stdout)
        // Every node lists (nothing); an attribute that is not there is ENODATA.
        let file = try Shell.run("/usr/bin/getfattr", ["-d", "--absolute-names", fixture.path("a.txt")])
        XCTAssertEqual(file.status, 0, file.stderr)
        let missing = try Shell.run("/usr/bin/getfattr", ["-n", "user.nothing", fixture.path("a.txt")])
        XCTAssertTrue(missing.stderr.contains("No such attribute"), missing.stderr)

        let request = try Shell.sh("echo 'file=\(try services().pki.signerP12) passphrase-file=\(try passphraseFile())' > '\(fixture.path(".asicfs/sign/pkcs12"))'")
        XCTAssertEqual(request.status, 0, request.stderr)
        XCTAssertEqual(try Shell.run("/bin/cat", [fixture.path(".asicfs/status/wait")]).status, 0)
        // Validated in the background: "checking" until then.
        var signed = ""
        XCTAssertTrue(eventually(30) {
            signed = (try? Shell.run("/usr/bin/getfattr", ["-n", "user.asicfs.status", "--only-values", fixture.mountpoint]).stdout) ?? ""
            return signed != "checking"
        })
        XCTAssertEqual(signed, "VALID")
        let signers = try Shell.run("/usr/bin/getfattr", ["-n", "user.asicfs.signers", "--only-values", fixture.mountpoint])
        XCTAssertEqual(signers.stdout, "JÕEORG,JAAK-KRISTJAN,38001085718")

        for (tool, arguments) in [("/usr/bin/rsync", ["-aX", fixture.mountpoint + "/", fixture.folder + "/rsync-copy/"]),
                                  ("/bin/cp", ["-a", fixture.mountpoint, fixture.folder + "/cp-copy"])] {
            let copied = try Shell.run(tool, arguments)
            XCTAssertEqual(copied.status, 0, "\(tool): \(copied.stderr)")
        }
        XCTAssertEqual(try readFile(fixture.folder + "/rsync-copy/a.txt"), Array("a\n".utf8))
        XCTAssertEqual(try readFile(fixture.folder + "/cp-copy/a.txt"), Array("a\n".utf8))
        try fixture.unmount()
    }

    /// A container keeps no security labels and no ACLs, and says so (EOPNOTSUPP) instead of
    /// "no such attribute": then `ls -l` asks the mount once, not twice per file.
    func testSecurityLabelsAndACLsAreNotSupportedSoLsAsksOnce() throws {
        let fixture = try MountFixture(self)
        var paths: [String] = []
        for index in 0..<30 {
            let path = fixture.folder + "/file-\(index).txt"
            try writeFile(Array("\(index)\n".utf8), path)
            paths.append(path)
        }
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container] + paths).status, 0)
        try fixture.mount(try settings())
        for name in ["security.selinux", "system.posix_acl_access", "trusted.anything"] {
            let label = try Shell.run("/usr/bin/getfattr", ["-n", name, fixture.path("file-0.txt")])
            XCTAssertTrue(label.stderr.contains("Operation not supported"), "\(name): \(label.stderr)")
        }
        let user = try Shell.run("/usr/bin/getfattr", ["-n", "user.nothing", fixture.path("file-0.txt")])
        XCTAssertTrue(user.stderr.contains("No such attribute"), user.stderr)

        let trace = fixture.folder + "/ls.trace"
        let listed = try Shell.run("/usr/bin/strace", ["-f", "-o", trace, "-e", "trace=getxattr,lgetxattr,fgetxattr",
                                                       "/bin/ls", "-l", fixture.mountpoint])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertEqual(listed.stdout.split(separator: "\n").filter { $0.contains("file-") }.count, 30, listed.stdout)
        let asked = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").filter { $0.contains("xattr(") }
        XCTAssertGreaterThan(asked.count, 0, "ls -l asks at least once")
        XCTAssertLessThanOrEqual(asked.count, 4, "ls -l of 30 files asked \(asked.count) times:\n\(asked.joined(separator: "\n"))")
        try fixture.unmount()
    }

    func testOpenMountsForTheDesktopAndCloseUnmounts() throws {
        let fixture = try MountFixture(self)
        try newContainer(fixture)
        let bin = fixture.folder + "/bin"
        let opened = try fakeProgram("xdg-open", in: bin)
        let runtime = fixture.folder + "/runtime"
        let environment = ["XDG_RUNTIME_DIR": runtime, "DISPLAY": ":99",
                           "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
        let first = try Shell.run(MountFixture.binary, ["open", fixture.container] + (try settings()).flatMap { ["-o", $0] },
                                  environment: environment)
        XCTAssertEqual(first.status, 0, first.stderr)
        let folder = runtime + "/asicfs/container.asice"
        XCTAssertEqual(first.stdout, folder + "\n")
        XCTAssertEqual(try String(contentsOfFile: folder + "/a.txt", encoding: .utf8), "a\n")
        // Opening again reuses the mount.
        let again = try Shell.run(MountFixture.binary, ["open", fixture.container], environment: environment)
        XCTAssertEqual(again.stdout, folder + "\n", again.stderr)
        XCTAssertEqual(try String(contentsOfFile: opened, encoding: .utf8), folder + "\n" + folder + "\n")
        let closed = try Shell.run(MountFixture.binary, ["close", fixture.container], environment: environment)
        XCTAssertEqual(closed.status, 0, closed.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder), "close removes the folder open made")
        let notMounted = try Shell.run(MountFixture.binary, ["close", fixture.container], environment: environment)
        XCTAssertEqual(notMounted.status, 1)
        XCTAssertTrue(notMounted.stderr.contains("is not mounted"), notMounted.stderr)
    }

    func testASigningInAMountIsANotificationReplacedWhenItEnds() throws {
        let fixture = try MountFixture(self)
        try newContainer(fixture)
        let bin = fixture.folder + "/bin"
        let notifications = try fakeProgram("notify-send", in: bin, output: "41\\n")
        try fixture.mount(try settings(), environment: ["DISPLAY": ":99",
                                                        "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")])
        let request = try Shell.sh("echo 'file=\(try services().pki.signerP12) passphrase-file=\(try passphraseFile())' > '\(fixture.path(".asicfs/sign/pkcs12"))'")
        XCTAssertEqual(request.status, 0, request.stderr)
        XCTAssertEqual(try Shell.run("/bin/cat", [fixture.path(".asicfs/status/wait")]).status, 0)
        try fixture.unmount()
        let lines = try String(contentsOfFile: notifications, encoding: .utf8).split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, "\(lines)")
        XCTAssertTrue(lines.first?.hasPrefix("--app-name=asicfs --print-id asicfs: signing container.asice with pkcs12") ?? false, "\(lines)")
        XCTAssertTrue(lines.last?.hasPrefix("--app-name=asicfs --replace-id=41 asicfs: container.asice signed signed: JÕEORG") ?? false, "\(lines)")

        // verify --notify: the verdict as one notification.
        let verified = try Shell.run(MountFixture.binary, ["verify", fixture.container, "--notify"] + (try settings()).flatMap { ["-o", $0] },
                                     environment: ["DISPLAY": ":99", "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")])
        XCTAssertEqual(verified.status, 0, verified.stderr)
        let deadline = Date().addingTimeInterval(5)
        var all: [String] = []
        while Date() < deadline {
            all = try String(contentsOfFile: notifications, encoding: .utf8).split(separator: "\n").map(String.init)
            if all.count == 3 { break }
            usleep(20_000)
        }
        XCTAssertEqual(all.last, "--app-name=asicfs asicfs: container.asice: VALID signed by JÕEORG,JAAK-KRISTJAN,38001085718")
    }

    func testTheMIMEAndDesktopFilesAreValidAndRecognizeContainers() throws {
        let contrib = MountFixture.packageRoot + "/contrib"
        XCTAssertEqual(try Shell.run("/usr/bin/xmllint", ["--noout", contrib + "/desktop/asicfs-mime.xml"]).status, 0)
        let validated = try Shell.run("/usr/bin/desktop-file-validate", [contrib + "/desktop/asicfs.desktop"])
        XCTAssertEqual(validated.status, 0, validated.stdout + validated.stderr)
        XCTAssertEqual(validated.stdout + validated.stderr, "")

        // A private data folder with the MIME package, as `make install` puts it in share/mime.
        let data = NSTemporaryDirectory() + "asicfs-mime-\(getpid())-\(UUID().uuidString.prefix(6))"
        defer { try? FileManager.default.removeItem(atPath: data) }
        try FileManager.default.createDirectory(atPath: data + "/mime/packages", withIntermediateDirectories: true)
        XCTAssertEqual(try Shell.run("/bin/cp", [contrib + "/desktop/asicfs-mime.xml", data + "/mime/packages/"]).status, 0)
        XCTAssertEqual(try Shell.run("/usr/bin/update-mime-database", [data + "/mime"]).status, 0)
        let environment = ["XDG_DATA_HOME": data, "XDG_DATA_DIRS": data + ":/usr/share"]
        // By name, and by content: a container named without its extension.
        let fixture = try MountFixture(self)
        try newContainer(fixture)
        XCTAssertEqual(rename(fixture.container, fixture.folder + "/renamed.bin"), 0)
        XCTAssertEqual(try Shell.run("/bin/cp", [fixture.folder + "/renamed.bin", fixture.folder + "/named.bdoc"]).status, 0)
        let byName = try Shell.run("/usr/bin/gio", ["info", "-a", "standard::content-type", fixture.folder + "/named.bdoc"], environment: environment)
        XCTAssertTrue(byName.stdout.contains("application/vnd.etsi.asic-e+zip"), byName.stdout + byName.stderr)
        let byContent = try Shell.run("/usr/bin/gio", ["info", "-a", "standard::content-type", fixture.folder + "/renamed.bin"], environment: environment)
        XCTAssertTrue(byContent.stdout.contains("application/vnd.etsi.asic-e+zip"), byContent.stdout + byContent.stderr)
        // xdg-mime asks the desktop's own tool (gio on GNOME), as in a desktop session.
        let xdg = try Shell.run("/usr/bin/xdg-mime", ["query", "filetype", fixture.folder + "/named.bdoc"],
                                environment: environment.merging(["XDG_CURRENT_DESKTOP": "GNOME"]) { $1 })
        XCTAssertEqual(xdg.stdout, "application/vnd.etsi.asic-e+zip\n", xdg.stderr)
        let timeStamped = fixture.folder + "/test.asics"
        try MountFixture.makeTimeStamped(timeStamped, Self.shared)
        let asics = try Shell.run("/usr/bin/gio", ["info", "-a", "standard::content-type", timeStamped], environment: environment)
        XCTAssertTrue(asics.stdout.contains("application/vnd.etsi.asic-s+zip"), asics.stdout + asics.stderr)

        // Encrypted containers: CDOC 1.x by name, CDOC2 by name and by content; the desktop file opens both.
        try writeFile(Array("<?xml version=\"1.0\"?>\n<denc:EncryptedData/>\n".utf8), fixture.folder + "/letter.cdoc")
        try writeFile(Array("CDOC".utf8) + [2, 0, 0, 0, 0], fixture.folder + "/letter.cdoc2")
        XCTAssertEqual(rename(fixture.folder + "/letter.cdoc2", fixture.folder + "/letter.bin"), 0)
        try writeFile(Array("CDOC".utf8) + [2, 0, 0, 0, 0], fixture.folder + "/letter.cdoc2")
        for (file, type) in [("letter.cdoc", "application/x-cdoc"), ("letter.cdoc2", "application/x-cdoc2"), ("letter.bin", "application/x-cdoc2")] {
            let info = try Shell.run("/usr/bin/gio", ["info", "-a", "standard::content-type", fixture.folder + "/" + file], environment: environment)
            XCTAssertTrue(info.stdout.contains("standard::content-type: \(type)\n"), file + ": " + info.stdout + info.stderr)
        }
        let desktopFile = try String(contentsOfFile: contrib + "/desktop/asicfs.desktop", encoding: .utf8)
        XCTAssertTrue(desktopFile.contains(";application/x-cdoc;application/x-cdoc2;\n"), desktopFile)
    }
}

import Foundation
import TestTools
import XCTest

/// When a request written to `.asicfs/sign/<method>` is checked and when it is taken: every write
/// checks what it can (EINVAL, the reason in `status/last-error`), the signing starts when the
/// file is closed. Real mounts, the PKCS#12 signer and the loopback TSA/OCSP of a fresh test PKI.
final class MountSignRequestTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!

    override class func setUp() { shared = SharedTestServices(label: "fs-sign-request") }
    override class func tearDown() { shared.stop() }

    var services: TestServices {
        get throws { try XCTUnwrap(Self.shared.services, "the loopback TSA/OCSP services and the test PKI: \(Self.shared.failure ?? "")") }
    }

    func settings() throws -> [String] {
        let services = try services
        return ["tsl=none", "trust-anchors=\(services.pki.root)", "tsa-url=\(services.tsaURL)", "cache-dir=\(Self.shared.folder)/cache"]
    }

    /// A mount of a container holding a.txt (none: a new, empty container).
    func mounted(withFile: Bool = true) throws -> MountFixture {
        let fixture = try MountFixture(self)
        if withFile {
            try writeFile(Array("alpha\n".utf8), fixture.folder + "/a.txt")
            let created = try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/a.txt"])
            XCTAssertEqual(created.status, 0, created.stderr)
            try fixture.mount(try settings())
        } else {
            try fixture.mount(try settings() + ["create"])
        }
        return fixture
    }

    func passphraseFile() throws -> String {
        let path = Self.shared.folder + "/pass-\(UUID().uuidString.prefix(6))"
        try writeFile(Array((TestPKI.passphrase + "\n").utf8), path)
        return path
    }

    func bash(_ script: String) throws -> Shell.Output { try Shell.run("/bin/bash", ["-c", script]) }

    func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// Writes `pieces` to one open file, one write() each, and closes it; prints the errno name
    /// of a refused write and stops there.
    func writeInPieces(_ path: String, _ pieces: [[UInt8]]) throws -> Shell.Output {
        let hex = pieces.map { $0.map { String(format: "%02x", $0) }.joined() }
        return try Shell.python("""
            import errno, os, sys
            fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
            try:
                for piece in sys.argv[2:]:
                    os.write(fd, bytes.fromhex(piece))
            except OSError as e:
                print(errno.errorcode[e.errno])
            os.close(fd)
            """, [path] + hex)
    }

    /// A request in three write()s, cut inside a parameter's name and inside a two-byte character:
    /// one signing, started at the close, with every parameter. (Each write was a whole request:
    /// the first failed with EINVAL, "unknown parameter 'pass'".)
    func testARequestSplitOverWritesIsTakenWhole() throws {
        let fixture = try mounted()
        let line = Array("file=\(try services.pki.signerP12) pass".utf8)
            + Array("phrase-file=\(try passphraseFile()) city=\"T".utf8) + [0xC3]
        let rest: [UInt8] = [0xB5] + Array("rva linn\"\n".utf8)
        let cut = Array("file=\(try services.pki.signerP12) pass".utf8).count
        let written = try writeInPieces(fixture.path(".asicfs/sign/pkcs12"), [Array(line[..<cut]), Array(line[cut...]), rest])
        XCTAssertEqual(written.status, 0, written.stderr)
        XCTAssertEqual(written.stdout, "", "a write was refused")
        let wait = try Shell.run("/bin/cat", [fixture.path(".asicfs/status/wait")])
        XCTAssertEqual(wait.status, 0, wait.stdout + wait.stderr)
        XCTAssertTrue(wait.stdout.hasPrefix("done: signed: ") && wait.stdout.contains("VALID"), wait.stdout)
        let folders = try FileManager.default.contentsOfDirectory(atPath: fixture.path(".asicfs/signatures"))
        XCTAssertEqual(folders.count, 1, "\(folders)")
        let report = try validatedText(fixture.path(".asicfs/signatures/\(folders.first ?? "")/report"))
        XCTAssertTrue(report.contains("Tõrva linn"), report)
        try fixture.unmount()
    }

    /// A whole request written and its file still open: nothing runs yet (status/current says it
    /// waits for the close); the close starts it. (The write started the signing.)
    func testTheSigningStartsWhenTheFileIsClosed() throws {
        let fixture = try mounted()
        let m = fixture.mountpoint
        let request = "file=\(try services.pki.signerP12) passphrase-file=\(try passphraseFile())\n"
        let held = try Shell.python("""
            import os, sys
            fd = os.open(sys.argv[1] + "/.asicfs/sign/pkcs12", os.O_WRONLY | os.O_TRUNC)
            os.write(fd, sys.argv[2].encode())
            print(open(sys.argv[1] + "/.asicfs/status/current").read(), end="")
            print(len(os.listdir(sys.argv[1] + "/.asicfs/signatures")))
            os.close(fd)
            """, [m, request])
        XCTAssertEqual(held.status, 0, held.stderr)
        XCTAssertEqual(held.stdout, "requested: the pkcs12 signing starts when its request file is closed\n0\n")
        let wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertEqual(wait.status, 0, wait.stdout + wait.stderr)
        XCTAssertTrue(wait.stdout.hasPrefix("done: signed: "), wait.stdout)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures").count, 1)
        try fixture.unmount()
    }

    /// What a write can know fails that write with EINVAL and says why: a relative path (the
    /// daemon does not share the writer's folder), the remote service's address not set, an
    /// empty container, an unknown parameter already ended by a space. Nothing starts.
    /// (Each was accepted, and failed later or never.)
    func testMistakesKnownAtTheWriteFailIt() throws {
        let fixture = try mounted()
        let m = fixture.mountpoint
        let before = try readFile(fixture.container)
        try FileManager.default.copyItem(atPath: try services.pki.signerP12, toPath: fixture.folder + "/signer.p12")
        let relative = try bash("cd '\(fixture.folder)' && echo 'file=signer.p12 passphrase-file=\(try passphraseFile())' > '\(m)/.asicfs/sign/pkcs12'")
        XCTAssertTrue(relative.stderr.contains("write error: Invalid argument"), relative.stderr)
        var lastError = try text(m + "/.asicfs/status/last-error")
        XCTAssertTrue(lastError.hasPrefix("pkcs12: file= takes an absolute path"), lastError)

        let remote = try bash("echo 'credential=my-key' > '\(m)/.asicfs/sign/remote'")
        XCTAssertTrue(remote.stderr.contains("write error: Invalid argument"), remote.stderr)
        lastError = try text(m + "/.asicfs/status/last-error")
        XCTAssertTrue(lastError.hasPrefix("remote signing: set remote.url"), lastError)

        let unknown = try writeInPieces(m + "/.asicfs/sign/pkcs12", [Array("colour=blue file=".utf8), Array("/x\n".utf8)])
        XCTAssertEqual(unknown.stdout, "EINVAL\n", unknown.stderr)
        XCTAssertTrue(try text(m + "/.asicfs/status/last-error").hasPrefix("pkcs12: unknown parameter 'colour'"))

        let wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertEqual(wait.stdout, "idle: no signing has run\n")
        try fixture.unmount()
        XCTAssertEqual(try readFile(fixture.container), before)

        let empty = try mounted(withFile: false)
        let request = "file=\(try services.pki.signerP12) passphrase-file=\(try passphraseFile())"
        let refused = try bash("echo '\(request)' > '\(empty.path(".asicfs/sign/pkcs12"))'")
        XCTAssertTrue(refused.stderr.contains("write error: Invalid argument"), refused.stderr)
        XCTAssertEqual(try text(empty.path(".asicfs/status/last-error")),
                       "cannot sign: the container has no data files; copy the files to sign into the mount first\n")
        XCTAssertEqual(try Shell.run("/bin/cat", [empty.path(".asicfs/status/wait")]).stdout, "idle: no signing has run\n")
        try empty.unmount()
    }

    /// A request without a final newline whose fault shows only when it is whole (file= missing):
    /// the write succeeds, and at the close nothing starts; status/wait fails with the reason,
    /// as does last-error. (It failed the write: a request ended at each write.)
    func testARequestRefusedAtItsCloseStartsNothingAndSaysWhy() throws {
        let fixture = try mounted()
        let m = fixture.mountpoint
        let before = try readFile(fixture.container)
        let written = try bash("printf 'passphrase-file=%s' '\(try passphraseFile())' > '\(m)/.asicfs/sign/pkcs12'")
        XCTAssertEqual(written.status, 0, written.stderr)
        let wait = try Shell.run("/bin/cat", [m + "/.asicfs/status/wait"])
        XCTAssertNotEqual(wait.status, 0)
        XCTAssertTrue(wait.stdout.hasPrefix("failed: the pkcs12 request was refused: pkcs12: 'file=PATH' is required"), wait.stdout)
        XCTAssertTrue(try text(m + "/.asicfs/status/last-error").contains("refused when its file was closed; nothing was signed"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m + "/.asicfs/signatures"), [])
        XCTAssertEqual(try bash("echo b > '\(m)/b.txt'").status, 0, "the container is not held by a signing")
        try fixture.unmount()
        XCTAssertNotEqual(try readFile(fixture.container), before)
        XCTAssertEqual(try containerContents(fixture.container).keys.sorted(), ["a.txt", "b.txt"])
    }
}

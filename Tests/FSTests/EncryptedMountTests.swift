import CDOC
import Crypto
import Foundation
import TestTools
import XCTest

/// `asicfs mount` of an encrypted container (CDOC2, CDOC 1.1), told by content: only `.asicfs`
/// until a request to `.asicfs/decrypt/<method>` decrypts it, then its files, read-only; the
/// decrypted bytes never on disk readable; unmounting removes the spool.
final class EncryptedMountTests: XCTestCase {
    /// A file made on the fly (never on disk in the clear): `size` bytes of a pattern, with
    /// `marker` at `markerOffset`.
    final class PatternSource: PlainFileSource {
        let name: String
        let size: Int64
        private let marker: [UInt8]
        private let markerOffset: Int64
        private var offset: Int64 = 0

        init(_ name: String, size: Int64, marker: String = "", markerOffset: Int64 = 0) {
            self.name = name
            self.size = size
            self.marker = Array(marker.utf8)
            self.markerOffset = markerOffset
        }

        static func byte(_ position: Int64, marker: [UInt8], markerOffset: Int64) -> UInt8 {
            if position >= markerOffset, position - markerOffset < Int64(marker.count) { return marker[Int(position - markerOffset)] }
            return UInt8(truncatingIfNeeded: position &* 7 &+ position >> 9)
        }

        func bytes(at position: Int64, count: Int) -> [UInt8] {
            (0..<Int64(count)).map { Self.byte(position + $0, marker: marker, markerOffset: markerOffset) }
        }

        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            let count = Int(min(Int64(buffer.count), size - offset))
            for index in 0..<count { buffer[index] = Self.byte(offset + Int64(index), marker: marker, markerOffset: markerOffset) }
            offset += Int64(count)
            return count
        }
    }

    final class TextSource: PlainFileSource {
        let name: String
        let bytes: [UInt8]
        private var offset = 0
        init(_ name: String, _ text: String) {
            self.name = name
            bytes = Array(text.utf8)
        }
        var size: Int64 { Int64(bytes.count) }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            let count = min(buffer.count, bytes.count - offset)
            for index in 0..<count { buffer[index] = bytes[offset + index] }
            offset += count
            return count
        }
    }

    /// Writes an encrypted container with the project's writers.
    private func encrypt(_ path: String, _ format: EncryptedFormat, _ files: [PlainFileSource], for recipients: [RecipientSpec]) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        defer { close(descriptor) }
        try EncryptedContainer.writer(for: format).write(files: files, for: recipients, to: descriptor)
    }

    /// A CDOC2 at `path` for a random symmetric key, whose base64 goes to `keyFile`.
    private func makeSymmetric(_ path: String, keyFile: String, label: String = "letter key", files: [PlainFileSource]) throws {
        let key = try SecureRandom.bytes(32)
        try Data((Data(key).base64EncodedString() + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))
        try encrypt(path, .cdoc2, files, for: [.symmetricKey(SecretBytes(key), label: label)])
    }

    /// Writes a request line to a control file, as `echo … > FILE` does; the errno of a refused write.
    @discardableResult
    private func request(_ path: String, _ line: String) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_TRUNC)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        let bytes = Array(line.utf8)
        return write(descriptor, bytes, bytes.count) == bytes.count ? 0 : errno
    }

    /// status/current once the decryption has ended ("done: …" or "failed: …").
    private func outcome(_ fixture: MountFixture, timeout: TimeInterval = 60) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let text = try String(contentsOfFile: fixture.path(".asicfs/status/current"), encoding: .utf8)
            if text.hasPrefix("done:") || text.hasPrefix("failed:") || Date() > deadline { return text }
            usleep(20_000)
        }
    }

    private func spoolFolders(_ fixture: MountFixture) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: fixture.folder)) ?? []).filter { $0.contains(".asicfs-spool-") }
    }

    private func names(_ folder: String) throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder).sorted() }

    // MARK: - Tests

    func testCDOC2NamedCdocShowsOnlyControlFolderUntilDecryptedThenReadOnlyFiles() throws {
        let fixture = try MountFixture(self)
        let container = fixture.folder + "/letter.cdoc"  // CDOC2 content under the CDOC 1.x name: told by content
        let keyFile = fixture.folder + "/key.b64"
        try makeSymmetric(container, keyFile: keyFile, label: "bad\u{1b}[31mlabel",
                          files: [TextSource("a.txt", "first letter\n"), TextSource("b.txt", "second\n")])
        try fixture.mount(container: container)

        XCTAssertEqual(try names(fixture.mountpoint), [".asicfs"])
        XCTAssertEqual(try names(fixture.path(".asicfs")), ["README", "decrypt", "status"])
        XCTAssertEqual(try names(fixture.path(".asicfs/decrypt")), ["id-card", "key", "password", "pkcs11", "pkcs12", "secret"])
        let recipients = try String(contentsOfFile: fixture.path(".asicfs/status/recipients"), encoding: .utf8)
        XCTAssertTrue(recipients.hasPrefix("format: CDOC2\nsymmetric-key: bad"), recipients)
        XCTAssertFalse(recipients.contains("\u{1b}"), "a control character in a label is never printed raw: \(recipients)")
        XCTAssertEqual(try String(contentsOfFile: fixture.path(".asicfs/status/current"), encoding: .utf8), "idle\n")
        XCTAssertTrue(try String(contentsOfFile: fixture.path(".asicfs/README"), encoding: .utf8).contains("decrypt/"))

        // Bad requests fail the write that makes them, and last-error says why.
        XCTAssertEqual(request(fixture.path(".asicfs/decrypt/secret"), "secret-file=\(keyFile) colour=red\n"), EINVAL)
        XCTAssertTrue(try String(contentsOfFile: fixture.path(".asicfs/status/last-error"), encoding: .utf8).contains("colour"))
        XCTAssertEqual(request(fixture.path(".asicfs/decrypt/secret"), "secret-file=key.b64\n"), EINVAL)
        XCTAssertTrue(try String(contentsOfFile: fixture.path(".asicfs/status/last-error"), encoding: .utf8).contains("absolute path"))
        XCTAssertEqual(request(fixture.path(".asicfs/decrypt/password"), "password-fd=0\n"), EINVAL)
        XCTAssertTrue(try String(contentsOfFile: fixture.path(".asicfs/status/last-error"), encoding: .utf8).contains("password-fd= is for the command line"))
        XCTAssertEqual(try names(fixture.mountpoint), [".asicfs"])

        XCTAssertEqual(request(fixture.path(".asicfs/decrypt/secret"), "secret-file=\(keyFile)\n"), 0)
        XCTAssertEqual(try outcome(fixture), "done: decrypted 2 files with secret\n")
        XCTAssertEqual(try names(fixture.mountpoint), [".asicfs", "a.txt", "b.txt"])
        XCTAssertEqual(try String(contentsOfFile: fixture.path("a.txt"), encoding: .utf8), "first letter\n")
        XCTAssertEqual(try String(contentsOfFile: fixture.path("b.txt"), encoding: .utf8), "second\n")
        var status = stat()
        XCTAssertEqual(stat(fixture.path("a.txt"), &status), 0)
        XCTAssertEqual(status.st_mode & 0o7777, 0o444)
        XCTAssertEqual(status.st_uid, getuid(), "the files belong to the mounter")

        // Read-only: no change is possible (root is not stopped by the mode: the mount refuses).
        XCTAssertEqual(open(fixture.path("a.txt"), O_WRONLY), -1)
        XCTAssertEqual(errno, EROFS)
        XCTAssertEqual(open(fixture.path("new.txt"), O_WRONLY | O_CREAT, 0o644), -1)
        XCTAssertEqual(errno, EROFS)
        XCTAssertEqual(unlink(fixture.path("a.txt")), -1)
        XCTAssertEqual(errno, EROFS)
        XCTAssertEqual(mkdir(fixture.path("folder"), 0o755), -1)
        XCTAssertEqual(errno, EROFS)
        XCTAssertEqual(rename(fixture.path("a.txt"), fixture.path("c.txt")), -1)
        XCTAssertEqual(errno, EROFS)
        XCTAssertEqual(unlink(fixture.path(".asicfs/README")), -1)
        XCTAssertEqual(errno, EPERM)
        // Decrypted once: a second request is refused.
        XCTAssertEqual(request(fixture.path(".asicfs/decrypt/secret"), "secret-file=\(keyFile)\n"), EBUSY)

        XCTAssertEqual(spoolFolders(fixture).count, 1, "the decrypted files are in the spool")
        try fixture.unmount()
        XCTAssertEqual(spoolFolders(fixture), [], "unmounting removes the spool")
        XCTAssertEqual(try names(fixture.folder).filter { !["mnt", "key.b64", "letter.cdoc"].contains($0) }, [])
    }

    func testCDOC11WithAnECKeyFileAndAFailedAttemptFirst() throws {
        let fixture = try MountFixture(self)
        let key = fixture.folder + "/key.pem", certificate = fixture.folder + "/cert.pem"
        let made = try Shell.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                      "-keyout", key, "-out", certificate, "-subj", "/CN=Mari Maasikas/C=EE", "-days", "2"])
        XCTAssertEqual(made.status, 0, made.stderr)
        let other = fixture.folder + "/other.pem"
        XCTAssertEqual(try Shell.run("/usr/bin/openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", other]).status, 0)
        let pem = try XCTUnwrap(FileManager.default.contents(atPath: certificate))
        let recipient = try XCTUnwrap(Certificate.all(pem: Array(pem)).first)
        let container = fixture.folder + "/letter.cdoc"
        try encrypt(container, .cdoc11, [TextSource("letter.txt", "tere\n")], for: [.certificate(recipient)])
        try fixture.mount(container: container)

        let recipients = try String(contentsOfFile: fixture.path(".asicfs/status/recipients"), encoding: .utf8)
        XCTAssertTrue(recipients.hasPrefix("format: CDOC 1.1\nec-certificate: "), recipients)
        XCTAssertTrue(recipients.contains("Mari Maasikas"), recipients)

        // The wrong key: the decryption fails, says why, and leaves nothing; then the right one.
        XCTAssertEqual(request(fixture.path(".asicfs/decrypt/key"), "key-file=\(other)\n"), 0)
        let failed = try outcome(fixture)
        XCTAssertTrue(failed.hasPrefix("failed: decrypting with key failed: "), failed)
        XCTAssertTrue(try String(contentsOfFile: fixture.path(".asicfs/status/last-error"), encoding: .utf8).hasPrefix("decrypting with key failed"))
        XCTAssertEqual(try names(fixture.mountpoint), [".asicfs"])
        XCTAssertEqual(request(fixture.path(".asicfs/decrypt/key"), "key-file=\(key)\n"), 0)
        XCTAssertEqual(try outcome(fixture), "done: decrypted 1 file with key\n")
        XCTAssertEqual(try String(contentsOfFile: fixture.path("letter.txt"), encoding: .utf8), "tere\n")
        try fixture.unmount()
        XCTAssertEqual(spoolFolders(fixture), [])
    }

    /// A broken encrypted container fails the mount with one line, exit status 1, nothing mounted.
    func testABrokenEncryptedContainerFailsTheMountWithOneLine() throws {
        let fixture = try MountFixture(self)
        let keyFile = fixture.folder + "/key.b64"
        let whole = fixture.folder + "/whole.cdoc2"
        try makeSymmetric(whole, keyFile: keyFile, files: [TextSource("a.txt", "a\n")])
        let truncated = fixture.folder + "/truncated.cdoc2"
        try Data(try readFile(whole).prefix(40)).write(to: URL(fileURLWithPath: truncated))
        let notCDOC = fixture.folder + "/other.cdoc"
        try Data("<?xml version=\"1.0\"?><other/>".utf8).write(to: URL(fileURLWithPath: notCDOC))
        for (path, expected) in [(truncated, "asicfs: the CDOC2 file is truncated\n"),
                                 (notCDOC, "asicfs: not a CDOC 1.x document (its root element is not EncryptedData)\n")] {
            let result = try Shell.run(MountFixture.binary, ["mount", path, fixture.mountpoint])
            XCTAssertEqual(result.status, 1)
            XCTAssertEqual(result.stderr, expected)
            XCTAssertFalse(fixture.isMounted)
        }
    }

    /// `asicfs open` (what the desktop file runs) mounts an encrypted container like a signed
    /// one; decrypting in it and `asicfs close` (which removes the spool) as in a mount.
    func testOpenMountsAnEncryptedContainerAndCloseRemovesTheSpool() throws {
        let fixture = try MountFixture(self)
        let runtime = fixture.folder + "/run"
        XCTAssertEqual(mkdir(runtime, 0o700), 0)
        let environment = ["XDG_RUNTIME_DIR": runtime]
        let container = fixture.folder + "/letter.cdoc2"
        let keyFile = fixture.folder + "/key.b64"
        try makeSymmetric(container, keyFile: keyFile, files: [TextSource("kiri.txt", "tere\n")])
        let opened = try Shell.run(MountFixture.binary, ["open", container, "--no-file-manager"], environment: environment)
        XCTAssertEqual(opened.status, 0, opened.stderr)
        // No certificate recipient: open does not try the ID-card, and says so.
        XCTAssertEqual(opened.stderr, "asicfs: no recipient of letter.cdoc2 is an EC key an ID-card could hold: it stays encrypted "
            + "until a request to .asicfs/decrypt/<method> decrypts it\n")
        let mountpoint = opened.stdout.trimmingCharacters(in: .newlines)
        addTeardownBlock { _ = try? Shell.run("fusermount3", ["-u", "-z", mountpoint]) }
        XCTAssertEqual(mountpoint, runtime + "/asicfs/letter.cdoc2")
        XCTAssertEqual(try names(mountpoint), [".asicfs"])
        XCTAssertEqual(request(mountpoint + "/.asicfs/decrypt/secret", "secret-file=\(keyFile)\n"), 0)
        let deadline = Date().addingTimeInterval(60)
        var current = ""
        repeat {
            current = try String(contentsOfFile: mountpoint + "/.asicfs/status/current", encoding: .utf8)
            if current.hasPrefix("done:") || current.hasPrefix("failed:") { break }
            usleep(20_000)
        } while Date() < deadline
        XCTAssertEqual(current, "done: decrypted 1 file with secret\n")
        XCTAssertEqual(try String(contentsOfFile: mountpoint + "/kiri.txt", encoding: .utf8), "tere\n")
        XCTAssertEqual(spoolFolders(fixture).count, 1)
        let closed = try Shell.run(MountFixture.binary, ["close", container], environment: environment)
        XCTAssertEqual(closed.status, 0, closed.stderr)
        XCTAssertEqual(spoolFolders(fixture), [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: mountpoint), "close removes the folder open made")
    }

    /// Browse mode: `.cdoc`/`.cdoc2` files that are encrypted containers (by content) are
    /// folders with a part set of their own; one that is not stays a file. A decrypted one stays
    /// open while idle (closing it would drop its files) and unmounting removes its spool.
    func testBrowseModeShowsEncryptedContainersAsFolders() throws {
        let browse = try BrowseFixture(self)
        let keyFile = browse.mount.folder + "/key.b64"
        try makeSymmetric(browse.real("letter.cdoc2"), keyFile: keyFile, files: [TextSource("kiri.txt", "tere\n")])
        try makeSymmetric(browse.real("other.cdoc"), keyFile: browse.mount.folder + "/other.b64", files: [TextSource("x.txt", "x\n")])
        try Data("just text\n".utf8).write(to: URL(fileURLWithPath: browse.real("notes.cdoc")))
        try Data(try readFile(browse.real("other.cdoc")).prefix(40)).write(to: URL(fileURLWithPath: browse.real("broken.cdoc2")))
        try browse.makeContainer("signed.asice", ["a.txt": "a\n"])
        try browse.start()

        var status = stat()
        XCTAssertEqual(stat(browse.path("letter.cdoc2"), &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFDIR)
        XCTAssertEqual(status.st_mode & 0o222, 0, "an encrypted container's folder is read-only")
        XCTAssertEqual(status.st_mode & 0o077, 0, "and only its owner's: others could read what the owner decrypted")
        XCTAssertEqual(stat(browse.path("notes.cdoc"), &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFREG, "a .cdoc that is no encrypted container is the file it is")
        // One that starts like one but whose header does not read: the file it is too, once entering it failed.
        XCTAssertEqual(opendir(browse.path("broken.cdoc2")), nil)
        XCTAssertEqual(errno, ENOTDIR)
        XCTAssertEqual(try readFile(browse.path("broken.cdoc2")).count, 40)
        XCTAssertEqual(try names(browse.path("letter.cdoc2")), [".asicfs"])
        XCTAssertTrue(try String(contentsOfFile: browse.path("letter.cdoc2/.asicfs/status/recipients"), encoding: .utf8)
            .hasPrefix("format: CDOC2\nsymmetric-key: "))
        XCTAssertEqual(try names(browse.path("signed.asice")), [".asicfs", "a.txt"], "signature containers as before")

        XCTAssertEqual(request(browse.path("letter.cdoc2/.asicfs/decrypt/secret"), "secret-file=\(keyFile)\n"), 0)
        let deadline = Date().addingTimeInterval(60)
        var current = ""
        repeat {
            current = try String(contentsOfFile: browse.path("letter.cdoc2/.asicfs/status/current"), encoding: .utf8)
            if current.hasPrefix("done:") || current.hasPrefix("failed:") { break }
            usleep(20_000)
        } while Date() < deadline
        XCTAssertEqual(current, "done: decrypted 1 file with secret\n")
        XCTAssertEqual(try String(contentsOfFile: browse.path("letter.cdoc2/kiri.txt"), encoding: .utf8), "tere\n")
        XCTAssertEqual(open(browse.path("letter.cdoc2/new.txt"), O_WRONLY | O_CREAT, 0o644), -1)
        XCTAssertEqual(errno, EROFS)
        // The other container has its own part set: still nothing decrypted there.
        XCTAssertEqual(try names(browse.path("other.cdoc")), [".asicfs"])
        XCTAssertEqual(try String(contentsOfFile: browse.path("other.cdoc/.asicfs/status/current"), encoding: .utf8), "idle\n")
        // The spool is beside the container, hidden from the browse listing.
        let spools = try names(browse.tree).filter { $0.contains(".asicfs-spool-") }
        XCTAssertEqual(spools.count, 1)
        XCTAssertFalse(try names(browse.mountpoint).contains(spools[0]))

        try browse.mount.unmount()
        XCTAssertEqual(try names(browse.tree).filter { $0.contains(".asicfs-spool-") }, [])
        XCTAssertEqual(try names(browse.tree), ["broken.cdoc2", "letter.cdoc2", "notes.cdoc", "other.cdoc", "signed.asice"])
    }

    /// Requirement: a marker in a decrypted 50 MB file is found nowhere on disk after reading it
    /// through the mount: not under the container's folder (where the spool is), $TMPDIR, /tmp,
    /// /var/tmp or the runtime folder. The scan looks at files changed since the test began
    /// (a leak is written during it), on those file systems only (-xdev: not into FUSE mounts);
    /// a plaintext file planted in the spool folder shows the scan finds what is there.
    func testMarkerOfADecrypted50MBFileIsNowhereOnDisk() throws {
        let fixture = try MountFixture(self)
        let stamp = fixture.folder + "/stamp"
        XCTAssertTrue(FileManager.default.createFile(atPath: stamp, contents: Data()))
        let marker = "asicfs-plaintext-marker-" + UUID().uuidString
        let size: Int64 = 50 << 20, markerOffset: Int64 = 25 << 20 + 12_345
        let container = fixture.folder + "/big.cdoc2"
        let keyFile = fixture.folder + "/key.b64"
        try makeSymmetric(container, keyFile: keyFile, files: [PatternSource("big.bin", size: size, marker: marker, markerOffset: markerOffset)])
        try fixture.mount(container: container)
        XCTAssertEqual(request(fixture.path(".asicfs/decrypt/secret"), "secret-file=\(keyFile)\n"), 0)
        XCTAssertEqual(try outcome(fixture, timeout: 120), "done: decrypted 1 file with secret\n")

        // Read through the mount, all of it, and compare.
        let expected = PatternSource("big.bin", size: size, marker: marker, markerOffset: markerOffset)
        let handle = try XCTUnwrap(FileHandle(forReadingAtPath: fixture.path("big.bin")))
        var position: Int64 = 0
        while true {
            let chunk = [UInt8](handle.readData(ofLength: 1 << 20))
            if chunk.isEmpty { break }
            guard chunk == expected.bytes(at: position, count: chunk.count) else { return XCTFail("different bytes at \(position)") }
            position += Int64(chunk.count)
        }
        try handle.close()
        XCTAssertEqual(position, size)
        // Memory stays bounded: the daemon never held the file (its peak is far below 50 MB).
        let daemon = try XCTUnwrap(fixture.pid)
        let status = try String(contentsOfFile: "/proc/\(daemon)/status", encoding: .utf8)
        let peakLine = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let peakKiB = try XCTUnwrap(Int64(peakLine.split(separator: " ", omittingEmptySubsequences: true)[1]))
        XCTAssertLessThan(peakKiB * 1024, size, "the daemon's peak resident memory: \(peakLine)")
        print("daemon \(peakLine)")

        let spools = spoolFolders(fixture)
        XCTAssertEqual(spools.count, 1)
        let spool = fixture.folder + "/" + spools[0]
        let spoolBytes = try names(spool).reduce(Int64(0)) { total, name in
            total + ((try FileManager.default.attributesOfItem(atPath: spool + "/" + name)[.size] as? Int64) ?? 0)
        }
        XCTAssertEqual(spoolBytes, size, "the decrypted file is in the spool (encrypted)")

        let runtime = (ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp") + "/asicfs-\(getuid())"
        let places = [fixture.folder, spool, NSTemporaryDirectory(), "/tmp", "/var/tmp", runtime]
            .filter { FileManager.default.fileExists(atPath: $0) }
        func filesHolding(_ text: String) throws -> [String] {
            let quoted = places.map { "'\($0)'" }.joined(separator: " ")
            let found = try Shell.sh("find \(quoted) -xdev -type f -newer '\(stamp)' -print0 2>/dev/null | xargs -0 -r grep -lF -- '\(text)' 2>/dev/null")
            return Set(found.stdout.split(separator: "\n").map(String.init)).sorted()
        }
        XCTAssertEqual(try filesHolding(marker), [], "the plaintext marker reached the disk")

        // The control: the same scan finds a plaintext copy planted in the spool folder.
        let planted = spool + "/planted-plaintext"
        XCTAssertTrue(FileManager.default.createFile(atPath: planted, contents: Data(("before " + marker + " after").utf8)))
        XCTAssertEqual(try filesHolding(marker), [planted])
        unlink(planted)

        try fixture.unmount()
        XCTAssertEqual(spoolFolders(fixture), [])
    }
}

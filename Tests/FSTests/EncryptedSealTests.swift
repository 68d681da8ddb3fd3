import CDOC
import Crypto
import Foundation
import TestTools
import XCTest

/// `asicfs mount -o create new.cdoc|new.cdoc2 MNT`: an empty writable folder whose files stay in
/// an encrypted spool, recipients written to `.asicfs/recipients`, and the container written
/// atomically by `echo seal > .asicfs/seal` or at the unmount. Keys are made by openssl here;
/// what the mount writes is decrypted with the project's CDOC readers and compared byte for byte.
final class EncryptedSealTests: XCTestCase {
    /// Collects decrypted files in memory.
    private final class MemorySink: PlainFileSink {
        var files: [String: [UInt8]] = [:]
        var order: [String] = []
        private var current: (String, [UInt8])?
        func begin(name: String, size: Int64?) throws { current = (name, []) }
        func write(_ bytes: UnsafeRawBufferPointer) throws { current?.1 += Array(bytes) }
        func end() throws {
            if let current {
                files[current.0] = current.1
                order.append(current.0)
            }
            current = nil
        }
        func abandon() { files = [:] }
    }

    /// A key made by openssl (`algorithm`: rsa or ec) and a self-signed certificate for it.
    private func makeKey(_ folder: String, _ name: String, ec: Bool) throws -> (key: String, certificate: String) {
        let key = folder + "/\(name).key", certificate = folder + "/\(name).pem"
        let generate = ec ? ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", key]
                          : ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key]
        XCTAssertEqual(try Shell.run("/usr/bin/openssl", generate).status, 0)
        let made = try Shell.run("/usr/bin/openssl", ["req", "-new", "-x509", "-key", key, "-subj", "/CN=\(name)", "-days", "2", "-out", certificate])
        XCTAssertEqual(made.status, 0, made.stderr)
        return (key, certificate)
    }

    private func decrypt(_ path: String, _ unlocker: Unlocker) throws -> MemorySink {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(descriptor, 0, "\(path) was not written")
        defer { close(descriptor) }
        let sink = MemorySink()
        try EncryptedContainer.open(descriptor: descriptor).decrypt(with: unlocker, into: sink)
        return sink
    }

    private func keyUnlocker(_ keyPath: String) throws -> Unlocker {
        .key(SoftwareRecipientKey(name: keyPath, privateKey: try PrivateKey.read(readFile(keyPath))))
    }

    /// Writes `bytes` in one write(2) (creating PATH when missing), as `cat FILE > PATH` does for a small file; the errno of a refused write.
    @discardableResult
    private func writeOnce(_ path: String, _ bytes: [UInt8]) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0o644)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        return write(descriptor, bytes, bytes.count) == bytes.count ? 0 : errno
    }

    private func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    private func names(_ folder: String) throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder).sorted() }

    /// Files under `places` changed since `stamp` that hold `marker` (not into FUSE mounts).
    private func filesHolding(_ marker: String, in places: [String], newerThan stamp: String) throws -> [String] {
        let quoted = places.filter { FileManager.default.fileExists(atPath: $0) }.map { "'\($0)'" }.joined(separator: " ")
        let found = try Shell.sh("find \(quoted) -xdev -type f -newer '\(stamp)' -print0 2>/dev/null | xargs -0 -r grep -lF -- '\(marker)' 2>/dev/null")
        return Set(found.stdout.split(separator: "\n").map(String.init)).sorted()
    }

    // MARK: - Tests

    func testCDOC11SealedForTwoCertificatesDecryptsByteExactWithEither() throws {
        let fixture = try MountFixture(self)
        let alice = try makeKey(fixture.folder, "alice", ec: false), bob = try makeKey(fixture.folder, "bob", ec: true)
        let container = fixture.folder + "/new.cdoc"
        try fixture.mount(["create"], container: container)
        XCTAssertEqual(try names(fixture.mountpoint), [".asicfs"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: container), "nothing is written before the seal")

        let big = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        try writeFile(Array("first letter\n".utf8), fixture.path("a.txt"))
        try writeFile(big, fixture.path("big.bin"))
        XCTAssertEqual(try Shell.run("/bin/cp", [alice.certificate, fixture.path("copied.pem")]).status, 0)
        XCTAssertEqual(try readFile(fixture.path("big.bin")), big, "read back through the mount before sealing")

        // Both certificates in one write.
        XCTAssertEqual(writeOnce(fixture.path(".asicfs/recipients"), try readFile(alice.certificate) + readFile(bob.certificate)), 0)
        XCTAssertEqual(try text(fixture.path(".asicfs/recipients")), "format: CDOC 1.1\ncertificate: CN=alice\ncertificate: CN=bob\n")
        XCTAssertEqual(try text(fixture.path(".asicfs/status/current")), "open: 2 recipients\n")

        XCTAssertEqual(writeOnce(fixture.path(".asicfs/seal"), Array("seal\n".utf8)), 0)
        XCTAssertTrue(try text(fixture.path(".asicfs/status/current")).hasPrefix("sealed: \(container) (CDOC 1.1, 3 files, 2 recipients)"))
        // Read-only now, showing what was sealed.
        XCTAssertEqual(writeOnce(fixture.path("a.txt"), [1]), EROFS)
        XCTAssertEqual(writeOnce(fixture.path("new.txt"), [1]), EROFS)
        XCTAssertEqual(try names(fixture.mountpoint), [".asicfs", "a.txt", "big.bin", "copied.pem"])
        XCTAssertEqual(try readFile(fixture.path("big.bin")), big)
        XCTAssertEqual(writeOnce(fixture.path(".asicfs/seal"), Array("seal\n".utf8)), EROFS)
        // The recipients it was sealed for can still be read (only changing them is refused).
        XCTAssertEqual(try text(fixture.path(".asicfs/recipients")), "format: CDOC 1.1\ncertificate: CN=alice\ncertificate: CN=bob\n")
        XCTAssertEqual(writeOnce(fixture.path(".asicfs/recipients"), try readFile(alice.certificate)), EROFS)

        let expected = ["a.txt": Array("first letter\n".utf8), "big.bin": big, "copied.pem": try readFile(alice.certificate)]
        for key in [alice.key, bob.key] {
            let sink = try decrypt(container, try keyUnlocker(key))
            XCTAssertEqual(sink.files, expected, "decrypted with \(key)")
        }
        var status = stat()
        XCTAssertEqual(stat(container, &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o644 & ~mode_t(0o022))
        try fixture.unmount()
        XCTAssertEqual(try names(fixture.folder).filter { $0.hasPrefix(".") }, [], "no spool, no temporary file left")
        XCTAssertEqual(try decrypt(container, try keyUnlocker(alice.key)).files, expected, "the unmount left the sealed container as it was")
    }

    /// A 0-byte file made first (`touch new.cdoc2`), a password recipient and an EC certificate;
    /// the unmount seals.
    func testCDOC2WithAPasswordAndACertificateIsSealedByTheUnmount() throws {
        let fixture = try MountFixture(self)
        let carol = try makeKey(fixture.folder, "carol", ec: true)
        let container = fixture.folder + "/new.cdoc2"
        XCTAssertTrue(FileManager.default.createFile(atPath: container, contents: Data()))
        let passwordFile = fixture.folder + "/password"
        try writeFile(Array("correct horse".utf8), passwordFile)
        try fixture.mount(["create"], container: container)
        try writeFile(Array("second letter\n".utf8), fixture.path("b.txt"))
        XCTAssertEqual(writeOnce(fixture.path(".asicfs/recipients"), Array("password-file=\(passwordFile)\n".utf8)), 0)
        XCTAssertEqual(writeOnce(fixture.path(".asicfs/recipients"), try readFile(carol.certificate)), 0)
        XCTAssertEqual(try text(fixture.path(".asicfs/recipients")), "format: CDOC2\npassword: password\ncertificate: CN=carol\n")
        XCTAssertEqual(try readFile(container), [], "still the empty file before the unmount")
        try fixture.unmount()

        let expected = ["b.txt": Array("second letter\n".utf8)]
        XCTAssertEqual(try decrypt(container, .password(SecretBytes(Array("correct horse".utf8)), label: nil)).files, expected)
        XCTAssertEqual(try decrypt(container, try keyUnlocker(carol.key)).files, expected)
        XCTAssertThrowsError(try decrypt(container, .password(SecretBytes(Array("wrong".utf8)), label: nil)))
        XCTAssertEqual(try names(fixture.folder).filter { $0.hasPrefix(".") }, [])
    }

    func testBadRecipientsAndSealsWithoutRecipientsOrFilesAreRefusedAndTheUnmountWritesNothing() throws {
        let fixture = try MountFixture(self)
        let container = fixture.folder + "/refused.cdoc"
        try fixture.mount(["create"], container: container)
        let recipients = fixture.path(".asicfs/recipients"), seal = fixture.path(".asicfs/seal")
        let lastError = fixture.path(".asicfs/status/last-error")

        XCTAssertEqual(writeOnce(seal, Array("seal\n".utf8)), EINVAL)
        XCTAssertEqual(try text(lastError), "seal: no recipients yet (write a certificate to .asicfs/recipients)\n")
        XCTAssertEqual(writeOnce(recipients, Array("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8)), EINVAL)
        XCTAssertEqual(try text(lastError), "recipients: no readable certificate (PEM) in what was written\n")
        XCTAssertEqual(writeOnce(recipients, Array("bogus\u{1b}[31m\n".utf8)), EINVAL)
        XCTAssertEqual(try text(lastError), "recipients: unknown line 'bogus\\x1b[31m' (a certificate (PEM), 'password-file=PATH' or 'password')\n")
        XCTAssertEqual(writeOnce(recipients, Array("password-file=/nonexistent\n".utf8)), EINVAL)
        XCTAssertEqual(try text(lastError), "recipients: a password recipient needs CDOC2 (.cdoc2)\n")
        XCTAssertEqual(writeOnce(seal, Array("open sesame\n".utf8)), EINVAL)
        XCTAssertEqual(try text(lastError), "seal: write the word 'seal'\n")
        XCTAssertEqual(try text(recipients), "format: CDOC 1.1\n", "nothing refused was taken")

        let dave = try makeKey(fixture.folder, "dave", ec: false)
        XCTAssertEqual(writeOnce(recipients, try readFile(dave.certificate)), 0)
        XCTAssertEqual(writeOnce(seal, Array("seal\n".utf8)), EINVAL)
        XCTAssertEqual(try text(lastError), "seal: no files to encrypt\n")
        XCTAssertEqual(try text(fixture.path(".asicfs/status/current")), "open: 1 recipient\n")

        let result = try Shell.run(MountFixture.binary, ["umount", fixture.mountpoint])
        XCTAssertEqual(result.stderr, "asicfs: \(container) was not written: no files when unmounted\n")
        XCTAssertNotEqual(result.status, 0)
        _ = fixture.reap()
        XCTAssertFalse(FileManager.default.fileExists(atPath: container))
        XCTAssertEqual(try names(fixture.folder).filter { $0.hasPrefix(".") }, [])
    }

    /// The same scan as EncryptedMountTests.testMarkerOfADecrypted50MBFileIsNowhereOnDisk:
    /// before the seal (the file in the spool) and after it (in the container too), the marker
    /// copied in is nowhere on disk; the scan finds a planted plaintext copy.
    func testMarkerCopiedInIsNowhereOnDiskBeforeOrAfterSealing() throws {
        let fixture = try MountFixture(self)
        let stamp = fixture.folder + "/stamp"
        XCTAssertTrue(FileManager.default.createFile(atPath: stamp, contents: Data()))
        let erin = try makeKey(fixture.folder, "erin", ec: false)
        let container = fixture.folder + "/secret.cdoc2"
        try fixture.mount(["create"], container: container)
        let marker = "asicfs-plaintext-marker-" + UUID().uuidString
        var plain = [UInt8](repeating: 0x61, count: 5 << 20)
        plain.replaceSubrange((3 << 20)..<(3 << 20) + marker.utf8.count, with: Array(marker.utf8))
        try writeFile(plain, fixture.path("plain.txt"))

        let runtime = (ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp") + "/asicfs-\(getuid())"
        let spools = try names(fixture.folder).filter { $0.contains(".asicfs-spool-") }
        XCTAssertEqual(spools.count, 1)
        let spool = fixture.folder + "/" + spools[0]
        let places = [fixture.folder, spool, NSTemporaryDirectory(), "/tmp", "/var/tmp", runtime]
        XCTAssertEqual(try filesHolding(marker, in: places, newerThan: stamp), [], "before the seal")
        let planted = spool + "/planted-plaintext"
        XCTAssertTrue(FileManager.default.createFile(atPath: planted, contents: Data(("before " + marker + " after").utf8)))
        XCTAssertEqual(try filesHolding(marker, in: places, newerThan: stamp), [planted])
        unlink(planted)

        XCTAssertEqual(writeOnce(fixture.path(".asicfs/recipients"), try readFile(erin.certificate)), 0)
        XCTAssertEqual(writeOnce(fixture.path(".asicfs/seal"), Array("seal\n".utf8)), 0)
        XCTAssertEqual(try filesHolding(marker, in: places, newerThan: stamp), [], "after the seal")
        try fixture.unmount()
        XCTAssertEqual(try filesHolding(marker, in: [fixture.folder, NSTemporaryDirectory(), "/tmp", "/var/tmp", runtime], newerThan: stamp), [])
        XCTAssertEqual(try decrypt(container, try keyUnlocker(erin.key)).files, ["plain.txt": plain])
    }

    /// The daemon killed after the container's bytes are written and before they get the name
    /// (a test-only gate holds the seal there): no container, no half container, no plaintext.
    func testADaemonKilledWhileSealingLeavesNoContainerAndNoPlaintext() throws {
        let fixture = try MountFixture(self)
        let stamp = fixture.folder + "/stamp"
        XCTAssertTrue(FileManager.default.createFile(atPath: stamp, contents: Data()))
        let frank = try makeKey(fixture.folder, "frank", ec: true)
        let container = fixture.folder + "/killed.cdoc"
        let gate = fixture.folder + "/hold-seal"
        XCTAssertTrue(FileManager.default.createFile(atPath: gate, contents: Data()))
        try fixture.mount(["create"], container: container, environment: ["ASICFS_TEST_HOLD_SEAL": gate])
        let marker = "asicfs-plaintext-marker-" + UUID().uuidString
        try writeFile(Array(("letter " + marker + "\n").utf8), fixture.path("letter.txt"))
        XCTAssertEqual(writeOnce(fixture.path(".asicfs/recipients"), try readFile(frank.certificate)), 0)

        let sealer = try Shell.spawn("/bin/sh", ["-c", "echo seal > '\(fixture.path(".asicfs/seal"))'"], stdout: "/dev/null", stderr: "/dev/null")
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: gate + ".held"), Date() < deadline { usleep(10_000) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: gate + ".held"), "the seal reached the gate")
        XCTAssertEqual(fixture.signal(SIGKILL), 128 + SIGKILL)
        fixture.stop()
        _ = Shell.wait(sealer)

        XCTAssertFalse(FileManager.default.fileExists(atPath: container))
        // Only the spool folder (ciphertext under a key that died with the daemon) is left.
        XCTAssertEqual(try names(fixture.folder).filter { $0.hasPrefix(".") && !$0.contains(".asicfs-spool-") }, [])
        XCTAssertEqual(try names(fixture.folder).filter { $0.contains("killed") && !$0.contains(".asicfs-spool-") }, [])
        let runtime = (ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp") + "/asicfs-\(getuid())"
        XCTAssertEqual(try filesHolding(marker, in: [fixture.folder, NSTemporaryDirectory(), "/tmp", "/var/tmp", runtime], newerThan: stamp), [])
    }
}

import Foundation
import TestTools
import XCTest

/// `mkdir NAME.cdoc2` (or `.cdoc`) in a browse mount (issue 33, item 4): files copied in stay in
/// an encrypted spool, recipients go to `NAME.cdoc2/.asicfs/recipients`, and the container is
/// written into the browse folder when sealed (`echo seal > .asicfs/seal`) or at the unmount;
/// then the folder is that container. Keys are made with openssl (`CDOCTestKey`); what is
/// written is read back with `asicfs ls` and `asicfs decrypt`.
final class BrowseSealTests: XCTestCase {
    private func asicfs(_ arguments: [String]) throws -> Shell.Output { try Shell.run(MountFixture.binary, arguments) }

    private func key(_ fixture: BrowseFixture, _ name: String, _ kind: CDOCTestKey.Kind = .rsa) throws -> CDOCTestKey {
        let key = try CDOCTestKey.make(kind, in: URL(fileURLWithPath: fixture.mount.folder), name: name)
        // The second user reads the certificate too.
        chmod(key.certificatePath, 0o644)
        return key
    }

    /// One write(2), as `cat FILE > PATH` does for a small file; the errno of a refused one.
    @discardableResult
    private func writeOnce(_ path: String, _ bytes: [UInt8]) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0o644)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        return write(descriptor, bytes, bytes.count) == bytes.count ? 0 : errno
    }

    private func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }
    private func names(_ folder: String) throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder).sorted() }

    /// `asicfs decrypt CONTAINER -d FOLDER --method key key-file=KEY`: name -> bytes.
    private func decrypted(_ container: String, _ method: [String], into folder: String) throws -> [String: [UInt8]] {
        let result = try asicfs(["decrypt", container, "-d", folder, "--method"] + method)
        XCTAssertEqual(result.status, 0, result.stderr)
        var files: [String: [UInt8]] = [:]
        for name in (try? names(folder)) ?? [] { files[name] = try readFile(folder + "/" + name) }
        return files
    }

    /// Files under `places` that hold `marker` (the FUSE mount is not searched: -xdev).
    private func filesHolding(_ marker: String, in places: [String]) throws -> [String] {
        let quoted = places.filter { FileManager.default.fileExists(atPath: $0) }.map { "'\($0)'" }.joined(separator: " ")
        let found = try Shell.sh("find \(quoted) -xdev -type f -print0 2>/dev/null | xargs -0 -r grep -lF -- '\(marker)' 2>/dev/null")
        return found.stdout.split(separator: "\n").map(String.init).sorted()
    }

    private func released(_ log: String) -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    // MARK: - Tests

    /// mkdir, copy, a certificate and a password, seal: the file is in the browse folder,
    /// `asicfs ls` lists the recipients, `asicfs decrypt` gives the bytes back with either; the
    /// folder is then that container (read-only, decryptable through `.asicfs/decrypt/`).
    func testMkdirCopyRecipientsAndSealWritesTheContainerIntoTheBrowseFolder() throws {
        let fixture = try BrowseFixture(self)
        try FileManager.default.createDirectory(atPath: fixture.real("docs"), withIntermediateDirectories: true)
        let alice = try key(fixture, "alice")
        let password = fixture.mount.folder + "/password"
        try writeFile(Array("Õige parool\n".utf8), password)
        try fixture.start()
        let folder = fixture.path("docs/letter.cdoc2"), container = fixture.real("docs/letter.cdoc2")

        XCTAssertEqual(mkdir(folder, 0o755), 0)
        XCTAssertEqual(mkdir(folder, 0o755), -1)
        XCTAssertEqual(errno, EEXIST)
        XCTAssertEqual(try names(fixture.path("docs")), ["letter.cdoc2"])
        var shown = stat()
        XCTAssertEqual(stat(folder, &shown), 0)
        XCTAssertEqual(shown.st_mode, S_IFDIR | 0o700, "what is in it is plaintext: its maker's alone")
        XCTAssertEqual(try names(folder), [".asicfs"])
        XCTAssertEqual(try names(folder + "/.asicfs"), ["README", "recipients", "seal", "status"])

        let big = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 7) }
        try writeFile(Array("Tere, Mari!\n".utf8), folder + "/kiri.txt")
        try writeFile(big, folder + "/photo.bin")
        XCTAssertEqual(try readFile(folder + "/photo.bin"), big, "read back before the seal")
        XCTAssertEqual(mkdir(folder + "/sub", 0o755), -1, "an encrypted container holds files, not folders")
        XCTAssertEqual(writeOnce(folder + "/.asicfs/recipients", try readFile(alice.certificatePath)), 0)
        XCTAssertEqual(writeOnce(folder + "/.asicfs/recipients", Array("password-file=\(password)\n".utf8)), 0)
        XCTAssertEqual(try text(folder + "/.asicfs/recipients"), "format: CDOC2\ncertificate: O=asicfs tests,CN=alice\npassword: password\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: container), "nothing is written before the seal")
        XCTAssertEqual(try names(fixture.real("docs")).filter { !$0.contains(".asicfs-spool-") }, [], "only the encrypted spool is on disk")

        XCTAssertEqual(writeOnce(folder + "/.asicfs/seal", Array("seal\n".utf8)), 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: container))
        XCTAssertEqual(Array(try readFile(container).prefix(4)), Array("CDOC".utf8))
        // Now the folder is the container on disk: read-only, its files shown once decrypted.
        XCTAssertTrue(eventually { (try? self.names(folder + "/.asicfs")) == ["README", "decrypt", "status"] },
                      "\((try? names(folder + "/.asicfs")) ?? [])")
        XCTAssertEqual(try names(folder), [".asicfs"])
        XCTAssertTrue(try text(folder + "/.asicfs/status/recipients").hasPrefix("format: CDOC2\n"))
        XCTAssertEqual(writeOnce(folder + "/new.txt", [1]), EROFS)
        XCTAssertEqual(writeOnce(folder + "/.asicfs/decrypt/key", Array("key-file=\(alice.keyPath)\n".utf8)), 0)
        XCTAssertTrue(eventually(30) { (try? self.names(folder)) == [".asicfs", "kiri.txt", "photo.bin"] }, "\((try? names(folder)) ?? [])")
        XCTAssertEqual(try readFile(folder + "/photo.bin"), big)

        let listed = try asicfs(["ls", container])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertTrue(listed.stdout.contains("encrypted for 2 recipients"), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("recipient: rsa-public-key  alice\n"), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("recipient: password  password\n"), listed.stdout)
        let expected = ["kiri.txt": Array("Tere, Mari!\n".utf8), "photo.bin": big]
        XCTAssertEqual(try decrypted(container, ["key", "key-file=\(alice.keyPath)"], into: fixture.mount.folder + "/by-key"), expected)
        XCTAssertEqual(try decrypted(container, ["password", "password-file=\(password)"], into: fixture.mount.folder + "/by-password"), expected)
        try fixture.mount.unmount()
        XCTAssertEqual(try names(fixture.real("docs")), ["letter.cdoc2"], "no spool or temporary left")
        XCTAssertEqual(try decrypted(container, ["key", "key-file=\(alice.keyPath)"], into: fixture.mount.folder + "/again"), expected)
    }

    /// The unmount seals a folder with recipients and files (CDOC 1.1 here), writes nothing for
    /// one without recipients and says so; rmdir removes an empty one silently; a rename
    /// before the seal is refused (EBUSY), as is rmdir of one with files.
    func testUnmountSealsWhatHasRecipientsAndSaysWhatWasNotWritten() throws {
        let fixture = try BrowseFixture(self)
        let bob = try key(fixture, "bob", .p384)
        try fixture.start()
        for name in ["sealed.cdoc", "norecipients.cdoc2", "empty.cdoc2"] { XCTAssertEqual(mkdir(fixture.path(name), 0o755), 0, name) }
        try writeFile(Array("first letter\n".utf8), fixture.path("sealed.cdoc/a.txt"))
        XCTAssertEqual(writeOnce(fixture.path("sealed.cdoc/.asicfs/recipients"), try readFile(bob.certificatePath)), 0)
        XCTAssertEqual(writeOnce(fixture.path("sealed.cdoc/.asicfs/recipients"), Array("password-file=/dev/null\n".utf8)), EINVAL)
        XCTAssertEqual(try text(fixture.path("sealed.cdoc/.asicfs/status/last-error")), "recipients: a password recipient needs CDOC2 (.cdoc2)\n")
        try writeFile(Array("nobody's\n".utf8), fixture.path("norecipients.cdoc2/b.txt"))
        XCTAssertEqual(try names(fixture.mountpoint), ["empty.cdoc2", "norecipients.cdoc2", "sealed.cdoc"])

        XCTAssertEqual(rename(fixture.path("sealed.cdoc"), fixture.path("renamed.cdoc")), -1)
        XCTAssertEqual(errno, EBUSY)
        XCTAssertEqual(rmdir(fixture.path("norecipients.cdoc2")), -1)
        XCTAssertEqual(errno, ENOTEMPTY)
        XCTAssertEqual(rmdir(fixture.path("empty.cdoc2")), 0)
        XCTAssertEqual(try names(fixture.mountpoint), ["norecipients.cdoc2", "sealed.cdoc"])
        // The real folder that holds an unsealed one is neither renamed nor removed.
        XCTAssertEqual(mkdir(fixture.path("sub"), 0o755), 0)
        XCTAssertEqual(mkdir(fixture.path("sub/inner.cdoc2"), 0o755), 0)
        XCTAssertEqual(rename(fixture.path("sub"), fixture.path("moved")), -1)
        XCTAssertEqual(errno, EBUSY)
        XCTAssertEqual(rmdir(fixture.path("sub")), -1)
        XCTAssertEqual(errno, ENOTEMPTY)
        XCTAssertEqual(rmdir(fixture.path("sub/inner.cdoc2")), 0)
        XCTAssertEqual(rmdir(fixture.path("sub")), 0)

        let result = try asicfs(["umount", fixture.mountpoint])
        XCTAssertEqual(result.stderr, "asicfs: \(fixture.real("norecipients.cdoc2")) was not written: no recipients when unmounted\n")
        XCTAssertNotEqual(result.status, 0)
        _ = fixture.mount.reap()
        XCTAssertEqual(try names(fixture.tree), ["sealed.cdoc"], "nothing else written, no spool left")
        XCTAssertTrue(try text(fixture.real("sealed.cdoc")).hasPrefix("<?xml"), "CDOC 1.1")
        XCTAssertEqual(try decrypted(fixture.real("sealed.cdoc"), ["key", "key-file=\(bob.keyPath)"], into: fixture.mount.folder + "/out"),
                       ["a.txt": Array("first letter\n".utf8)])
    }

    /// The daemon killed while sealing, after the container's bytes are written and before they
    /// get their name (ASICFS_TEST_HOLD_SEAL): no container and no plaintext anywhere.
    func testADaemonKilledWhileSealingLeavesNoContainerAndNoPlaintext() throws {
        let fixture = try BrowseFixture(self)
        let carol = try key(fixture, "carol", .p256)
        let gate = fixture.mount.folder + "/hold-seal"
        XCTAssertTrue(FileManager.default.createFile(atPath: gate, contents: Data()))
        try fixture.start([], environment: ["ASICFS_TEST_HOLD_SEAL": gate])
        let folder = fixture.path("killed.cdoc2")
        XCTAssertEqual(mkdir(folder, 0o755), 0)
        let marker = "asicfs-plaintext-marker-" + UUID().uuidString
        try writeFile(Array(("letter " + marker + "\n").utf8), folder + "/letter.txt")
        XCTAssertEqual(writeOnce(folder + "/.asicfs/recipients", try readFile(carol.certificatePath)), 0)

        let sealer = try Shell.spawn("/bin/sh", ["-c", "echo seal > '\(folder)/.asicfs/seal'"], stdout: "/dev/null", stderr: "/dev/null")
        XCTAssertTrue(eventually(30) { FileManager.default.fileExists(atPath: gate + ".held") }, "the seal reached the gate")
        XCTAssertEqual(fixture.mount.signal(SIGKILL), 128 + SIGKILL)
        fixture.mount.stop()
        _ = Shell.wait(sealer)

        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.real("killed.cdoc2")))
        // Only the spool folder (ciphertext under a key that died with the daemon) is left.
        XCTAssertEqual(try names(fixture.tree).filter { !$0.contains(".asicfs-spool-") }, [])
        let runtime = (ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp") + "/asicfs-\(getuid())"
        XCTAssertEqual(try filesHolding(marker, in: [fixture.mount.folder, NSTemporaryDirectory(), "/var/tmp", runtime]), [])
        // The check finds plaintext where there is some.
        try writeFile(Array(marker.utf8), fixture.tree + "/planted")
        XCTAssertEqual(try filesHolding(marker, in: [fixture.tree]), [fixture.tree + "/planted"])
    }

    /// allow_other: a folder another user made is theirs alone (0700, and refused even where
    /// the kernel's check would not run): they cannot enter, read, add, write recipients,
    /// seal or remove it. What they make is theirs, and its container is written as theirs;
    /// a password file they name is read with their rights.
    func testAnotherUserCannotReadFillOrSealAFolderTheyDidNotMake() throws {
        let fixture = try BrowseFixture.sharedWithSecondUser(self)
        let dave = try key(fixture, "dave")
        chmod(fixture.mount.folder, 0o755)
        let rootOnly = fixture.mount.folder + "/root-password"
        try writeFile(Array("root's\n".utf8), rootOnly)
        chmod(rootOnly, 0o600)
        try fixture.start(["allow_other"])
        let secret = "root-plaintext-" + UUID().uuidString
        XCTAssertEqual(mkdir(fixture.path("shared/root.cdoc2"), 0o755), 0)
        try writeFile(Array(secret.utf8), fixture.path("shared/root.cdoc2/secret.txt"))

        let out = try runAsSecondUser(BrowseFixture.attempts + """
            m, cert, rootonly = sys.argv[1:4]
            r = m + '/root.cdoc2'
            def put(path, text):
                with open(path, 'w') as f: f.write(text)
            attempt('mode', lambda: mode(r))
            attempt('owner', lambda: owner(r))
            attempt('list', lambda: os.listdir(r))
            attempt('read', lambda: open(r + '/secret.txt').read())
            attempt('add', lambda: put(r + '/mine.txt', 'x'))
            attempt('recipients', lambda: put(r + '/.asicfs/recipients', open(cert).read()))
            attempt('seal', lambda: put(r + '/.asicfs/seal', 'seal'))
            attempt('remove', lambda: os.rmdir(r))
            attempt('rename', lambda: os.rename(r, m + '/taken.cdoc2'))
            # Their own one.
            n = m + '/mine.cdoc2'
            attempt('make', lambda: os.mkdir(n))
            attempt('fill', lambda: put(n + '/letter.txt', 'from the second user'))
            attempt('root-only password', lambda: put(n + '/.asicfs/recipients', 'password-file=' + rootonly + '\\n'))
            attempt('asked password', lambda: put(n + '/.asicfs/recipients', 'password\\n'))
            attempt('their recipient', lambda: put(n + '/.asicfs/recipients', open(cert).read()))
            attempt('their seal', lambda: put(n + '/.asicfs/seal', 'seal'))
            print(json.dumps(out))
            """, [fixture.path("shared"), dave.certificatePath, rootOnly])

        XCTAssertEqual(out["mode"], "done '0o700'")
        XCTAssertEqual(out["owner"], "done '0:0'")
        for attempt in ["list", "read", "add", "recipients", "seal", "remove"] {
            XCTAssertEqual(out[attempt], "error EACCES", attempt)
        }
        XCTAssertTrue(out["rename"]?.hasPrefix("error") ?? false, out["rename"] ?? "-")
        for attempt in ["make", "fill", "their recipient", "their seal"] {
            XCTAssertTrue(out[attempt]?.hasPrefix("done") ?? false, "\(attempt): \(out[attempt] ?? "-")")
        }
        XCTAssertEqual(out["root-only password"], "error EINVAL", "the file is read with the writer's rights")
        XCTAssertEqual(out["asked password"], "error EINVAL", "pinentry would ask on the daemon user's display")
        // Untouched by the second user: still only root's file, and no recipient.
        XCTAssertEqual(try names(fixture.path("shared/root.cdoc2")), [".asicfs", "secret.txt"])
        XCTAssertEqual(try text(fixture.path("shared/root.cdoc2/.asicfs/recipients")), "format: CDOC2\n")
        XCTAssertEqual(writeOnce(fixture.path("shared/root.cdoc2/.asicfs/recipients"), try readFile(dave.certificatePath)), 0)

        let (user, group) = try SecondUser.ids()
        var st = stat()
        XCTAssertEqual(stat(fixture.real("shared/mine.cdoc2"), &st), 0)
        XCTAssertEqual(st.st_uid, user, "written as its maker's")
        XCTAssertEqual(st.st_gid, group)
        try fixture.mount.unmount()
        XCTAssertEqual(stat(fixture.real("shared/root.cdoc2"), &st), 0)
        XCTAssertEqual(st.st_uid, 0)
        XCTAssertEqual(try decrypted(fixture.real("shared/root.cdoc2"), ["key", "key-file=\(dave.keyPath)"], into: fixture.mount.folder + "/root"),
                       ["secret.txt": Array(secret.utf8)])
        XCTAssertEqual(try decrypted(fixture.real("shared/mine.cdoc2"), ["key", "key-file=\(dave.keyPath)"], into: fixture.mount.folder + "/mine"),
                       ["letter.txt": Array("from the second user".utf8)])
    }

    /// An unsealed folder is never let go: neither when idle (a container made idle after it is
    /// released first, so the release pass has seen it) nor beyond `open-containers` (another
    /// container entered is evicted, never the unsealed one, which is the least recently used).
    func testIdleReleaseAndTheOpenContainerLimitNeverDropAnUnsealedFolder() throws {
        let fixture = try BrowseFixture(self)
        let erin = try key(fixture, "erin")
        try fixture.makeContainer("a.asice", ["one.txt": "1\n"])
        let idleLog = fixture.mount.folder + "/idle.log", limitLog = fixture.mount.folder + "/limit.log"

        // Idle: a.asice becomes idle after kept.cdoc2, so when a.asice is let go, the release
        // pass has found kept.cdoc2 idle for longer too.
        try fixture.start([], environment: ["ASICFS_TEST_RELEASE_LOG": idleLog])
        let kept = fixture.path("kept.cdoc2")
        XCTAssertEqual(mkdir(kept, 0o755), 0)
        try writeFile(Array("kept\n".utf8), kept + "/kept.txt")
        XCTAssertEqual(try readFile(fixture.path("a.asice/one.txt")), Array("1\n".utf8))
        XCTAssertTrue(eventually(20) { self.released(idleLog).contains("a.asice") }, "a.asice was let go: \(released(idleLog))")
        XCTAssertEqual(released(idleLog), ["a.asice"])
        XCTAssertEqual(try names(kept), [".asicfs", "kept.txt"])
        XCTAssertEqual(try readFile(kept + "/kept.txt"), Array("kept\n".utf8))
        XCTAssertEqual(writeOnce(kept + "/.asicfs/recipients", try readFile(erin.certificatePath)), 0)
        try fixture.mount.unmount()
        XCTAssertEqual(try decrypted(fixture.real("kept.cdoc2"), ["key", "key-file=\(erin.keyPath)"], into: fixture.mount.folder + "/idle"),
                       ["kept.txt": Array("kept\n".utf8)])

        // Over the limit of one: entering a.asice evicts a.asice once it is idle.
        try fixture.start(["open-containers=1"], environment: ["ASICFS_TEST_RELEASE_LOG": limitLog])
        let limited = fixture.path("limited.cdoc2")
        XCTAssertEqual(mkdir(limited, 0o755), 0)
        try writeFile(Array("limited\n".utf8), limited + "/limited.txt")
        XCTAssertEqual(try readFile(fixture.path("a.asice/one.txt")), Array("1\n".utf8))
        XCTAssertTrue(eventually(20) { self.released(limitLog).contains("a.asice") }, "a.asice was let go: \(released(limitLog))")
        XCTAssertEqual(released(limitLog), ["a.asice"])
        XCTAssertEqual(try readFile(limited + "/limited.txt"), Array("limited\n".utf8))
        XCTAssertEqual(writeOnce(limited + "/.asicfs/recipients", try readFile(erin.certificatePath)), 0)
        XCTAssertEqual(writeOnce(limited + "/.asicfs/seal", Array("seal\n".utf8)), 0)
        try fixture.mount.unmount()
        XCTAssertEqual(try decrypted(fixture.real("limited.cdoc2"), ["key", "key-file=\(erin.keyPath)"], into: fixture.mount.folder + "/limit"),
                       ["limited.txt": Array("limited\n".utf8)])
    }
}

import Foundation
import TestTools
import XCTest

/// Browse mode (`asicfs mount FOLDER MOUNTPOINT`): real mounts of a folder tree whose
/// containers are folders; everything else passes through.
final class BrowseMountTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "fs-browse") }
    override class func tearDown() { shared.stop() }

    func python(_ code: String, _ args: [String]) throws {
        let result = try Shell.python(code, args)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "ok\n", result.stderr)
    }

    static let expectError = """
        import os, sys, errno, stat, ctypes
        def expect(code, f, *a):
            try:
                f(*a)
            except OSError as e:
                assert e.errno == code, (f.__name__, a, errno.errorcode[e.errno], errno.errorcode[code])
                return
            raise AssertionError(('no error', f.__name__, a))
        libc = ctypes.CDLL(None, use_errno=True)
        def rename2(a, b, flags):
            if libc.renameat2(-100, a.encode(), -100, b.encode(), flags) != 0:
                e = ctypes.get_errno(); raise OSError(e, os.strerror(e))

        """

    func testEveryPassThroughOperationChangesTheRealFolderWithItsOwnErrors() throws {
        let fixture = try BrowseFixture(self)
        try fixture.start()
        try python(Self.expectError + """
            m, d = sys.argv[1], sys.argv[2]
            with open(m + '/new.txt', 'w') as f: f.write('hello')
            assert open(d + '/new.txt').read() == 'hello'
            with open(m + '/new.txt', 'r+') as f: f.seek(5); f.write(' world')
            assert open(m + '/new.txt').read() == 'hello world'
            os.truncate(m + '/new.txt', 5); assert open(d + '/new.txt').read() == 'hello'
            with open(m + '/new.txt', 'r+') as f: os.ftruncate(f.fileno(), 2)
            assert os.path.getsize(d + '/new.txt') == 2 and os.stat(m + '/new.txt').st_size == 2
            os.mkdir(m + '/folder'); assert os.path.isdir(d + '/folder')
            os.rename(m + '/new.txt', m + '/folder/moved.txt'); assert os.path.exists(d + '/folder/moved.txt')
            expect(errno.ENOTEMPTY, os.rmdir, m + '/folder')
            expect(errno.ENOENT, os.stat, m + '/missing')
            expect(errno.ENOENT, open, m + '/missing/x', 'w')
            expect(errno.ENOTDIR, os.listdir, m + '/folder/moved.txt')
            expect(errno.EEXIST, os.mkdir, m + '/folder')
            open(m + '/other.txt', 'w').write('other')
            expect(errno.EEXIST, rename2, m + '/other.txt', m + '/folder/moved.txt', 1)   # RENAME_NOREPLACE
            rename2(m + '/other.txt', m + '/folder/moved.txt', 2)                          # RENAME_EXCHANGE
            assert open(d + '/folder/moved.txt').read() == 'other' and os.path.getsize(d + '/other.txt') == 2
            os.unlink(m + '/other.txt'); os.unlink(m + '/folder/moved.txt'); os.rmdir(m + '/folder')
            assert os.listdir(d) == [], os.listdir(d)
            open(m + '/t.txt', 'w').close()
            os.chmod(m + '/t.txt', 0o640); assert stat.S_IMODE(os.stat(d + '/t.txt').st_mode) == 0o640
            os.chown(m + '/t.txt', 1234, 5678); assert (os.stat(d + '/t.txt').st_uid, os.stat(d + '/t.txt').st_gid) == (1234, 5678)
            os.utime(m + '/t.txt', ns=(1000000123, 2000000456))
            st = os.stat(d + '/t.txt'); assert (st.st_atime_ns, st.st_mtime_ns) == (1000000123, 2000000456), st
            st, sd = os.stat(m + '/t.txt'), os.stat(d + '/t.txt')
            assert (st.st_uid, st.st_gid, st.st_mode, st.st_size, st.st_mtime_ns) == (sd.st_uid, sd.st_gid, sd.st_mode, sd.st_size, sd.st_mtime_ns)
            os.symlink('t.txt', m + '/link'); assert os.readlink(d + '/link') == 't.txt' and os.readlink(m + '/link') == 't.txt'
            assert os.path.islink(m + '/link') and open(m + '/link').read() == ''
            a, b = os.statvfs(m), os.statvfs(d); assert (a.f_blocks, a.f_bsize, a.f_files) == (b.f_blocks, b.f_bsize, b.f_files)
            # rm of an open file: its descriptor still works, and no .fuse_hidden file is left in the folder.
            f = open(m + '/open.txt', 'w+'); f.write('still here'); f.flush(); os.unlink(m + '/open.txt')
            assert not os.path.exists(d + '/open.txt')
            f.seek(0); assert f.read() == 'still here'; assert os.fstat(f.fileno()).st_size == 10; f.close()
            assert not [n for n in os.listdir(d) if n.startswith('.fuse_hidden')], os.listdir(d)
            print('ok')
            """, [fixture.mountpoint, fixture.tree])
        try fixture.mount.unmount()
    }

    /// With -o allow_other the kernel checks the real owners and modes (default_permissions):
    /// another user gets EACCES, as on the folder itself.
    func testAnotherUserGetsEACCESFromTheRealModes() throws {
        let fixture = try BrowseFixture(self)
        try writeFile(Array("secret".utf8), fixture.real("secret.txt"))
        chmod(fixture.real("secret.txt"), 0o600)
        try writeFile(Array("public".utf8), fixture.real("public.txt"))
        chmod(fixture.real("public.txt"), 0o644)
        chmod(fixture.mount.folder, 0o755)
        try fixture.start(["allow_other"])
        let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]
        let secret = try Shell.run("/usr/bin/setpriv", nobody + ["cat", fixture.path("secret.txt")])
        XCTAssertNotEqual(secret.status, 0)
        XCTAssertTrue(secret.stderr.contains("Permission denied"), secret.stderr)
        let open = try Shell.run("/usr/bin/setpriv", nobody + ["cat", fixture.path("public.txt")])
        XCTAssertEqual(open.stdout, "public", open.stderr)
        let write = try Shell.run("/usr/bin/setpriv", nobody + ["sh", "-c", "echo x > '\(fixture.path("public.txt"))'"])
        XCTAssertTrue(write.stderr.contains("Permission denied"), write.stderr)
        try fixture.mount.unmount()
    }

    func testContainersInSubfoldersWithAnyCaseOfExtensionAreFoldersWithTheirFilesTimes() throws {
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("a.asice", ["one.txt": "1"])
        try fixture.makeContainer("sub/deeper/B.ASICE", ["two.txt": "22"])
        try fixture.makeContainer("sub/c.Sce", ["three.txt": "333"])
        try fixture.makeContainer("d.BDoc", ["four.txt": "4444"])
        // A TeRa-like ASiC-S: a time-stamped DDOC.
        try MountFixture.makeTimeStamped(fixture.real("sub/e.ASICS"), Self.shared, dataFile: "ddoc_for_testing.ddoc", data: Data(TestContainers.ddoc.utf8))
        try writeFile(Array("plain".utf8), fixture.real("sub/plain.txt"))
        try fixture.start()
        for (container, name, text) in [("a.asice", "one.txt", "1"), ("sub/deeper/B.ASICE", "two.txt", "22"),
                                        ("sub/c.Sce", "three.txt", "333"), ("d.BDoc", "four.txt", "4444")] {
            var isFolder: ObjCBool = false
            XCTAssertTrue(FileManager.default.fileExists(atPath: fixture.path(container), isDirectory: &isFolder) && isFolder.boolValue, container)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.path(container)).sorted(), [".asicfs", name], container)
            XCTAssertEqual(try String(contentsOfFile: fixture.path(container + "/" + name), encoding: .utf8), text)
            // `ls -l` shows the container file's size and time.
            var inMount = stat(), onDisk = stat()
            XCTAssertEqual(stat(fixture.path(container), &inMount), 0)
            XCTAssertEqual(stat(fixture.real(container), &onDisk), 0)
            XCTAssertEqual(inMount.st_size, onDisk.st_size, container)
            XCTAssertEqual(inMount.st_mtim.tv_sec, onDisk.st_mtim.tv_sec, container)
            XCTAssertEqual(inMount.st_mode & 0o777, 0o755, container)
        }
        XCTAssertEqual(try String(contentsOfFile: fixture.path("sub/plain.txt"), encoding: .utf8), "plain")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.path("sub")).sorted(),
                       ["c.Sce", "deeper", "e.ASICS", "plain.txt"])
        // .asics: a read-only folder with its data file and the time-stamp's status.
        var asics = stat()
        XCTAssertEqual(stat(fixture.path("sub/e.ASICS"), &asics), 0)
        XCTAssertEqual(asics.st_mode & 0o777, 0o555)
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: fixture.path("sub/e.ASICS")).contains(".asicfs"))
        let write = try Shell.sh("echo x > '\(fixture.path("sub/e.ASICS/new.txt"))'")
        XCTAssertTrue(write.stderr.contains("Read-only file system"), write.stderr)
        try fixture.mount.unmount()
    }

    func testAFileWithAContainersNameThatIsNoContainerIsShownAsTheFileItIs() throws {
        let fixture = try BrowseFixture(self)
        try writeFile(Array("not a zip at all".utf8), fixture.real("text.asice"))
        // A ZIP, but not an ASiC container (no mimetype): it looks like one until it is opened.
        XCTAssertEqual(try Shell.python("import zipfile, sys; zipfile.ZipFile(sys.argv[1], 'w').writestr('a.txt', 'zip')",
                                        [fixture.real("plain-zip.asice")]).status, 0)
        let zipBytes = try readFile(fixture.real("plain-zip.asice"))
        try fixture.start()
        // Decided at the first look: find walks the tree without a "Not a directory" (it was a
        // folder in the listing and ENOTDIR when entered, once per mount).
        let walk = try Shell.run("/usr/bin/find", [fixture.mountpoint])
        XCTAssertEqual(walk.status, 0, walk.stderr)
        XCTAssertEqual(walk.stderr, "")
        XCTAssertTrue(walk.stdout.contains(fixture.path("plain-zip.asice") + "\n"), walk.stdout)
        let files = try Shell.run("/usr/bin/find", [fixture.mountpoint, "-name", "*.asice", "-type", "f"])
        XCTAssertEqual(Set(files.stdout.split(separator: "\n").map(String.init)),
                       [fixture.path("plain-zip.asice"), fixture.path("text.asice")], files.stderr)
        var st = stat()
        XCTAssertEqual(lstat(fixture.path("text.asice"), &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFREG)
        XCTAssertEqual(try readFile(fixture.path("text.asice")), Array("not a zip at all".utf8))
        let listing = try Shell.run("/bin/ls", [fixture.path("plain-zip.asice/")])
        XCTAssertNotEqual(listing.status, 0, "entering it fails: \(listing.stdout)")
        XCTAssertEqual(try readFile(fixture.path("plain-zip.asice")), zipBytes, "the file it is, from the start")
        XCTAssertEqual(lstat(fixture.path("plain-zip.asice"), &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFREG)
        try fixture.mount.unmount()
    }

    /// `rm -rf` of a folder holding a signed container: everything else goes, the signed
    /// container stays as it was (its signature, its data files, its file).
    func testARecursiveDeleteLeavesSignedContainersIntact() throws {
        let fixture = try BrowseFixture(self)
        try FileManager.default.createDirectory(atPath: fixture.real("archive/deeper"), withIntermediateDirectories: true)
        try MountFixture.makeSigned(fixture.real("archive/deeper/signed.asice"), Self.shared)
        try fixture.makeContainer("archive/unsigned.asice", ["draft.txt": "draft\n"])
        try writeFile(Array("real\n".utf8), fixture.real("archive/real.txt"))
        let before = try readFile(fixture.real("archive/deeper/signed.asice"))
        try fixture.start(["tsl=none"])
        let removed = try Shell.run("/bin/rm", ["-rf", fixture.path("archive")])
        XCTAssertNotEqual(removed.status, 0, "rm must report what it could not remove")
        XCTAssertTrue(removed.stderr.contains("Operation not permitted"), removed.stderr)
        XCTAssertEqual(try readFile(fixture.real("archive/deeper/signed.asice")), before)
        // What the user may delete goes: the unsigned container's data files (its file stays,
        // as rm does not rmdir a folder whose .asicfs it could not empty).
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.path("archive/unsigned.asice")), [".asicfs"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.real("archive/real.txt")))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.path("archive/deeper/signed.asice/.asicfs/signatures")),
                       ["0-JÕEORG,JAAK-KRISTJAN,38001085718"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.path("archive/deeper/signed.asice")).sorted(),
                       [".asicfs", "test.txt"])
        try fixture.mount.unmount()
        XCTAssertEqual(try readFile(fixture.real("archive/deeper/signed.asice")), before)
        XCTAssertEqual(try containerContents(fixture.real("archive/unsigned.asice")), [:])
    }

    func testMkdirRmdirAndMoveOfContainers() throws {
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("a.asice", ["one.txt": "1"])
        try fixture.makeContainer("c.asice", ["three.txt": "3"])
        try MountFixture.makeSigned(fixture.real("signed.asice"), Self.shared)
        try FileManager.default.createDirectory(atPath: fixture.real("sub"), withIntermediateDirectories: true)
        try fixture.start()
        try python(Self.expectError + """
            m, d = sys.argv[1], sys.argv[2]
            os.mkdir(m + '/new.asice')
            assert os.path.isdir(m + '/new.asice') and not os.path.exists(d + '/new.asice')
            assert 'new.asice' in os.listdir(m)
            os.rmdir(m + '/new.asice'); assert not os.path.exists(m + '/new.asice')
            os.mkdir(m + '/made.BDOC')
            open(m + '/made.BDOC/x.txt', 'w').write('x')
            assert os.path.isfile(d + '/made.BDOC'), 'on disk with its first file'
            expect(errno.EEXIST, os.mkdir, m + '/a.asice')
            expect(errno.ENOTEMPTY, os.rmdir, m + '/a.asice')
            expect(errno.ENOTEMPTY, os.rmdir, m + '/signed.asice')
            os.unlink(m + '/c.asice/three.txt'); os.rmdir(m + '/c.asice')
            assert not os.path.exists(d + '/c.asice') and not os.path.exists(m + '/c.asice')
            # A container renamed with changes not saved yet: saved, then its file renamed.
            open(m + '/a.asice/pending.txt', 'w').write('pending')
            os.rename(m + '/a.asice', m + '/sub/b.asice')
            assert not os.path.exists(d + '/a.asice') and os.path.isfile(d + '/sub/b.asice')
            assert sorted(os.listdir(m + '/sub/b.asice')) == ['.asicfs', 'one.txt', 'pending.txt']
            # Between containers, and between a container and a real folder: EXDEV.
            expect(errno.EXDEV, os.rename, m + '/sub/b.asice/one.txt', m + '/made.BDOC/one.txt')
            expect(errno.EXDEV, os.rename, m + '/sub/b.asice/one.txt', m + '/one.txt')
            open(m + '/real.txt', 'w').write('real')
            expect(errno.EXDEV, os.rename, m + '/real.txt', m + '/made.BDOC/real.txt')
            print('ok')
            """, [fixture.mountpoint, fixture.tree])
        // mv copies and removes across containers.
        let move = try Shell.run("/bin/mv", [fixture.path("sub/b.asice/one.txt"), fixture.path("made.BDOC/")])
        XCTAssertEqual(move.status, 0, move.stderr)
        try fixture.mount.unmount()
        XCTAssertEqual(try containerContents(fixture.real("sub/b.asice")), ["pending.txt": Array("pending".utf8)])
        XCTAssertEqual(try containerContents(fixture.real("made.BDOC")), ["x.txt": Array("x".utf8), "one.txt": Array("1".utf8)])
    }

    func testCopiesIntoTwoContainersAtOnceFromTwoProcesses() throws {
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("one.asice", ["a.txt": "a"])
        try fixture.makeContainer("sub/two.asice", ["b.txt": "b"])
        let first = textLikeBytes(count: 3 << 20, seed: 1), second = textLikeBytes(count: 3 << 20, seed: 2)
        try writeFile(first, fixture.mount.folder + "/first.bin")
        try writeFile(second, fixture.mount.folder + "/second.bin")
        try fixture.start()
        let copies = try [("first.bin", "one.asice"), ("second.bin", "sub/two.asice")].map { source, target in
            try Shell.spawn("/bin/cp", [fixture.mount.folder + "/" + source, fixture.path(target + "/big.bin")],
                            stdout: "/dev/null", stderr: fixture.mount.folder + "/\(source).err")
        }
        for pid in copies { XCTAssertEqual(Shell.wait(pid), 0) }
        XCTAssertEqual(try readFile(fixture.path("one.asice/big.bin")), first)
        XCTAssertEqual(try readFile(fixture.path("sub/two.asice/big.bin")), second)
        try fixture.mount.unmount()
        XCTAssertEqual(try containerContents(fixture.real("one.asice"))["big.bin"], first)
        XCTAssertEqual(try containerContents(fixture.real("sub/two.asice"))["big.bin"], second)
        let leftovers = try FileManager.default.subpathsOfDirectory(atPath: fixture.tree).filter { $0.contains(".asicfs-") }
        XCTAssertEqual(leftovers, [])
    }

    /// Another program changes a container: it writes a new file and renames it over the old one,
    /// as editors and sync clients do (asicfs itself waits for no mount: it is refused while one
    /// has the container open).
    func replaceFromOutside(_ fixture: BrowseFixture, _ relative: String, _ files: [String: String]) throws {
        let made = fixture.mount.folder + "/outside-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true)
        for (name, text) in files { try writeFile(Array(text.utf8), made + "/" + name) }
        let created = try Shell.run(MountFixture.binary, ["create", "-q", made + "/new.asice"] + files.keys.sorted().map { made + "/" + $0 })
        XCTAssertEqual(created.status, 0, created.stderr)
        XCTAssertEqual(rename(made + "/new.asice", fixture.real(relative)), 0)
    }

    func testAChangeMadeOnDiskByAnotherProgramIsSeen() throws {
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("a.asice", ["one.txt": "1"])
        try fixture.start()
        XCTAssertEqual(try String(contentsOfFile: fixture.path("a.asice/one.txt"), encoding: .utf8), "1")
        try replaceFromOutside(fixture, "a.asice", ["one.txt": "1", "outside.txt": "outside"])
        XCTAssertTrue(eventually {
            (try? FileManager.default.contentsOfDirectory(atPath: fixture.path("a.asice")))?.contains("outside.txt") ?? false
        }, "the container is opened again after the outside change")
        XCTAssertEqual(try String(contentsOfFile: fixture.path("a.asice/outside.txt"), encoding: .utf8), "outside")
        try fixture.mount.unmount()
    }

    /// The single-mount rule: changes never overwrite another program's change; they are rescued.
    func testUnsavedChangesAreRescuedWhenAnotherProgramChangedTheContainer() throws {
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("a.asice", ["one.txt": "1"])
        let gate = fixture.mount.folder + "/hold-saves"
        try fixture.start(environment: ["ASICFS_TEST_HOLD_SAVES": gate])
        try writeFile([], gate)
        XCTAssertEqual(try Shell.sh("printf inside > '\(fixture.path("a.asice/inside.txt"))'").status, 0)
        XCTAssertTrue(eventually { access(gate + ".held", F_OK) == 0 }, "the save is held")
        try replaceFromOutside(fixture, "a.asice", ["one.txt": "1", "outside.txt": "outside"])
        unlink(gate)
        let umount = try Shell.run(MountFixture.binary, ["umount", fixture.mountpoint])
        XCTAssertEqual(umount.status, 1)
        XCTAssertTrue(umount.stderr.contains("changed by another program") && umount.stderr.contains("unsaved files are in"), umount.stderr)
        XCTAssertEqual(Set(try containerContents(fixture.real("a.asice")).keys), ["one.txt", "outside.txt"])
        let rescued = try FileManager.default.contentsOfDirectory(atPath: fixture.tree).filter { $0.contains(".asicfs-unsaved-") }
        XCTAssertEqual(rescued.count, 1)
        XCTAssertEqual(try readFile(fixture.real((rescued.first ?? "") + "/inside.txt")), Array("inside".utf8))
    }

    func testUnmountSavesEveryContainer() throws {
        let fixture = try BrowseFixture(self)
        let names = ["a.asice", "sub/b.asice", "sub/deeper/c.sce"]
        for name in names { try fixture.makeContainer(name, ["keep.txt": "keep"]) }
        try fixture.start()
        for name in names { try writeFile(Array(name.utf8), fixture.path(name + "/new.txt")) }
        try fixture.mount.unmount()
        for name in names {
            XCTAssertEqual(try containerContents(fixture.real(name)), ["keep.txt": Array("keep".utf8), "new.txt": Array(name.utf8)], name)
        }
    }

    func testAKilledDaemonLeavesEveryContainerOldOrNewAndValid() throws {
        let fixture = try BrowseFixture(self)
        let names = (0..<4).map { "c\($0).asice" }
        for name in names { try fixture.makeContainer(name, ["keep.txt": "keep"]) }
        try fixture.start()
        // Some saved (fsync), some pending, one in the middle of a big copy-in.
        for (index, name) in names.enumerated() {
            try writeFile(Array(name.utf8), fixture.path(name + "/new.txt"))
            if index % 2 == 0 {
                let fsync = try Shell.python("import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)", [fixture.path(name + "/new.txt")])
                XCTAssertEqual(fsync.status, 0, fsync.stderr)
            }
        }
        let big = fixture.mount.folder + "/big.bin"
        XCTAssertEqual(try Shell.sh("head -c 100000000 /dev/urandom > '\(big)'").status, 0)
        let copy = try Shell.spawn("/bin/cp", [big, fixture.path("c3.asice/big.bin")], stdout: "/dev/null", stderr: "/dev/null")
        usleep(150_000)
        XCTAssertEqual(fixture.mount.signal(SIGKILL), 128 + SIGKILL)
        _ = Shell.wait(copy)
        XCTAssertTrue(eventually(15) { !fixture.mount.isMounted }, "auto_unmount")  // a loaded machine was seen to take over 5 s
        for (index, name) in names.enumerated() {
            let contents = try containerContents(fixture.real(name))
            XCTAssertEqual(contents["keep.txt"], Array("keep".utf8), name)
            if index % 2 == 0 { XCTAssertEqual(contents["new.txt"], Array(name.utf8), name) }
        }
        // The next mount removes what the killed daemon left (its spool folders) when it opens a container there.
        try fixture.start()
        _ = try FileManager.default.contentsOfDirectory(atPath: fixture.path("c0.asice"))
        try fixture.mount.unmount()
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: fixture.tree).filter { $0.contains(".asicfs-") }
        XCTAssertEqual(leftovers, [])
    }

    func testIdleContainersBeyondTheLimitAreSavedClosedAndOpenedAgain() throws {
        let fixture = try BrowseFixture(self)
        let names = (0..<6).map { "c\($0).asice" }
        for name in names { try fixture.makeContainer(name, ["keep.txt": name]) }
        try fixture.start(["open-containers=2"])
        try writeFile(Array("written".utf8), fixture.path("c0.asice/new.txt"))
        for name in names.dropFirst() {
            XCTAssertEqual(try String(contentsOfFile: fixture.path(name + "/keep.txt"), encoding: .utf8), name)
        }
        XCTAssertTrue(eventually { fixture.openContainerFiles().count <= 2 }, "\(fixture.openContainerFiles())")
        // c0 was closed: its change saved first (while still mounted).
        XCTAssertEqual(try containerContents(fixture.real("c0.asice"))["new.txt"], Array("written".utf8))
        // And it opens again on use.
        XCTAssertEqual(try String(contentsOfFile: fixture.path("c0.asice/new.txt"), encoding: .utf8), "written")
        XCTAssertTrue(fixture.openContainerFiles().contains { $0.hasSuffix("/c0.asice") })
        try fixture.mount.unmount()
    }

    func testMountingAFolderWithCreateIsAUsageMistake() throws {
        let fixture = try BrowseFixture(self)
        let result = try Shell.run(MountFixture.binary, ["mount", fixture.tree, fixture.mountpoint, "-o", "create"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("is a folder"), result.stderr)
        // Daemonized, as a user runs it.
        let mount = try Shell.run(MountFixture.binary, ["mount", fixture.tree, fixture.mountpoint])
        XCTAssertEqual(mount.status, 0, mount.stderr)
        XCTAssertTrue(fixture.mount.isMounted)
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["umount", fixture.mountpoint]).status, 0)
    }

    /// A daemon killed mid-save leaves its temporary (`.NAME.asicfs-PID-RANDOM.tmp`) beside the
    /// container: not listed. Other dot-names ending in .tmp are the user's and are.
    func testSaveTemporariesOfAKilledDaemonAreNotListed() throws {
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("a.asice", ["one.txt": "1"])
        for name in [".a.asice.asicfs-4194300-2718281.tmp", ".notes.tmp", ".a.asicfs-x-1.tmp"] {
            try writeFile(Array("left".utf8), fixture.real(name))
        }
        try fixture.start()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: fixture.mountpoint).sorted(),
                       [".a.asicfs-x-1.tmp", ".notes.tmp", "a.asice"])
        try fixture.mount.unmount()
    }
}

/// The desktop side of browse mode: a container's folder has the status attributes, real files
/// keep their own, and a container opened in the mount is locked against other asicfs writers.
final class BrowseDesktopTests: XCTestCase {
    func testContainerFoldersHaveTheStatusAttributesAndOpenContainersAreLocked() throws {
        let fixture = try BrowseFixture(self)
        try fixture.makeContainer("sub/a.asice", ["keep.txt": "keep"])
        try writeFile(Array("plain".utf8), fixture.tree + "/plain.txt")
        XCTAssertEqual(try Shell.run("/usr/bin/setfattr", ["-n", "user.colour", "-v", "blue", fixture.tree + "/plain.txt"]).status, 0)
        try fixture.start()

        let status = try Shell.run("/usr/bin/getfattr", ["-n", "user.asicfs.status", "--only-values", fixture.path("sub/a.asice")])
        XCTAssertEqual(status.stdout, "unsigned", status.stderr)
        let real = try Shell.run("/usr/bin/getfattr", ["-d", "--absolute-names", fixture.path("plain.txt")])
        XCTAssertTrue(real.stdout.contains("user.colour=\"blue\""), real.stdout + real.stderr)
        let folder = try Shell.run("/usr/bin/getfattr", ["-d", "--absolute-names", fixture.path("sub")])
        XCTAssertEqual(folder.status, 0, folder.stderr)
        // Inside a container, labels and ACLs are "no such attribute" (a single mount says
        // EOPNOTSUPP), so `ls -lR` keeps asking the real files beside it.
        let label = try Shell.run("/usr/bin/getfattr", ["-n", "security.selinux", fixture.path("sub/a.asice/keep.txt")])
        XCTAssertTrue(label.stderr.contains("No such attribute"), label.stderr)
        XCTAssertEqual(try Shell.run("/usr/bin/rsync", ["-aX", fixture.mountpoint + "/", fixture.mount.folder + "/copy/"]).status, 0)
        XCTAssertEqual(try readFile(fixture.mount.folder + "/copy/sub/a.asice/keep.txt"), Array("keep".utf8))

        // The container is open in the mount now: `asicfs add` waits for no one and says so.
        let refused = try Shell.run(MountFixture.binary, ["add", fixture.tree + "/sub/a.asice", fixture.tree + "/plain.txt"])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("it is open in the asicfs browse mount at \(fixture.mountpoint) (as \(fixture.mountpoint)/sub/a.asice, pid "),
                      refused.stderr)
        try fixture.mount.unmount()
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["add", fixture.tree + "/sub/a.asice", fixture.tree + "/plain.txt"]).status, 0)
    }
}

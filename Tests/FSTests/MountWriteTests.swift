import TestTools
import XCTest

/// Changing an unsigned container through a real mount, and the refusals on a signed one.
final class MountWriteTests: XCTestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    override class func setUp() { shared = SharedTestServices(label: "fs-write") }
    override class func tearDown() { shared.stop() }

    private func newMount() throws -> MountFixture {
        let fixture = try MountFixture(self)
        try writeFile(Array("alpha\n".utf8), fixture.folder + "/a.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/a.txt"]).status, 0)
        try fixture.mount()
        return fixture
    }

    func testCopyInOverwriteRemoveRenameTruncateTouchAndPartialRewrite() throws {
        let fixture = try newMount()
        let m = fixture.mountpoint
        let big = textLikeBytes(count: 5 << 20)
        try writeFile(big, fixture.folder + "/big.txt")
        var script = """
            set -e
            cp '\(fixture.folder)/big.txt' '\(m)/big.txt'
            echo bravo > '\(m)/b.txt'
            echo 'alpha two' > '\(m)/a.txt'
            mkdir '\(m)/docs'
            mv '\(m)/b.txt' '\(m)/docs/b-renamed.txt'
            printf 'to be removed' > '\(m)/gone.txt'
            rm '\(m)/gone.txt'
            printf '0123456789' > '\(m)/t.txt'
            truncate -s 4 '\(m)/t.txt'
            printf 'XY' | dd of='\(m)/t.txt' bs=1 seek=1 conv=notrunc status=none
            touch -d '2020-02-20 20:20:20 UTC' '\(m)/docs/b-renamed.txt'
            """
        var result = try Shell.sh(script)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try readFile(m + "/t.txt"), Array("0XY3".utf8))
        XCTAssertEqual(try readFile(m + "/big.txt"), big)
        XCTAssertFalse(FileManager.default.fileExists(atPath: m + "/gone.txt"))
        let touched = try FileManager.default.attributesOfItem(atPath: m + "/docs/b-renamed.txt")[.modificationDate] as! Date
        XCTAssertEqual(touched.timeIntervalSince1970, 1_582_230_020, accuracy: 1)

        // fsync saves at once: the container on disk has everything before unmounting.
        result = try Shell.python("import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)", [m + "/a.txt"])
        XCTAssertEqual(result.status, 0, result.stderr)
        var saved = try containerContents(fixture.container)
        XCTAssertEqual(Set(saved.keys), ["a.txt", "big.txt", "docs/b-renamed.txt", "t.txt"])
        XCTAssertEqual(saved["a.txt"], Array("alpha two\n".utf8))
        XCTAssertEqual(saved["docs/b-renamed.txt"], Array("bravo\n".utf8))
        XCTAssertEqual(saved["t.txt"], Array("0XY3".utf8))
        XCTAssertEqual(saved["big.txt"], big)

        // Moving a folder moves everything in it; removing the last file keeps the folder.
        script = "set -e; mv '\(m)/docs' '\(m)/papers'; rm '\(m)/papers/b-renamed.txt'; test -d '\(m)/papers'; rmdir '\(m)/papers'"
        result = try Shell.sh(script)
        XCTAssertEqual(result.status, 0, result.stderr)
        try fixture.unmount()
        saved = try containerContents(fixture.container)
        XCTAssertEqual(Set(saved.keys), ["a.txt", "big.txt", "t.txt"])
        let listing = try Shell.run(MountFixture.binary, ["ls", fixture.container])
        XCTAssertTrue(listing.stdout.contains("3 data files"), listing.stdout)
    }

    /// Removing and moving thousands of files in folders (rm -rf, mv of a folder): linear work,
    /// and the container ends up with exactly the files left (rm -rf of 10,000 files took
    /// minutes when every removal rescanned every name).
    func testRemovingAndMovingThousandsOfFilesInFolders() throws {
        let fixture = try MountFixture(self)
        let made = try Shell.python("""
            import sys, zipfile
            names = ['d%02d/f%04d.txt' % (i // 100, i) for i in range(3000)]
            with zipfile.ZipFile(sys.argv[1], 'w') as z:
                z.writestr(zipfile.ZipInfo('mimetype'), 'application/vnd.etsi.asic-e+zip')
                for n in names: z.writestr(n, n)
                z.writestr('META-INF/manifest.xml', '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"/>' + ''.join('<manifest:file-entry manifest:full-path="%s" manifest:media-type="text/plain"/>' % n for n in names) + '</manifest:manifest>')
            """, [fixture.container])
        XCTAssertEqual(made.status, 0, made.stderr)
        try fixture.mount()
        let m = fixture.mountpoint
        let result = try Shell.sh("set -e; rm -rf '\(m)'/d0* '\(m)'/d1*; mv '\(m)/d25' '\(m)/moved'; rm '\(m)/d29/f2950.txt'; ls '\(m)' | wc -l")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "10", "d20..d29, d25 now named moved")
        try fixture.unmount()
        let names = Set(try containerContents(fixture.container).keys)
        XCTAssertEqual(names.count, 999)
        XCTAssertTrue(names.contains("moved/f2500.txt"))
        XCTAssertFalse(names.contains { $0.hasPrefix("d25/") || $0.hasPrefix("d0") || $0.hasPrefix("d1") })
        XCTAssertFalse(names.contains("d29/f2950.txt"))
    }

    /// A write-only descriptor that is its file's only one writes around the page cache
    /// (direct_io), so every descriptor opened on that file meanwhile does too: a reader sees each
    /// write at once, also in a page it has read before. A reader that was there first keeps the
    /// cache, and the writer then writes through it.
    func testReadersSeeWhatAWriteOnlyDescriptorWritesAtOnce() throws {
        let fixture = try MountFixture(self)
        try fixture.mount(["create"])
        let check = try Shell.python("""
            import os, sys
            m = sys.argv[1]
            # The writer first: the reader opened meanwhile goes around the cache too.
            w = os.open(m + '/log.txt', os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(w, b'a' * 100)
            r = os.open(m + '/log.txt', os.O_RDONLY)
            assert os.pread(r, 4096, 0) == b'a' * 100
            os.write(w, b'b' * 100)
            assert os.pread(r, 4096, 0) == b'a' * 100 + b'b' * 100, 'stale after an append'
            os.pwrite(w, b'c' * 50, 0)
            assert os.pread(r, 4096, 0) == b'c' * 50 + b'a' * 50 + b'b' * 100, 'stale after an overwrite'
            os.close(w); os.close(r)
            # The reader first: it keeps the cache and the writer writes through it.
            r = os.open(m + '/log.txt', os.O_RDONLY)
            assert os.pread(r, 4096, 0) == b'c' * 50 + b'a' * 50 + b'b' * 100
            w = os.open(m + '/log.txt', os.O_WRONLY)
            os.pwrite(w, b'd' * 10, 0)
            assert os.pread(r, 4096, 0) == b'd' * 10 + b'c' * 40 + b'a' * 50 + b'b' * 100, 'stale through the cache'
            os.close(w); os.close(r)
            """, [fixture.mountpoint])
        XCTAssertEqual(check.status, 0, check.stderr)
        try fixture.unmount()
        XCTAssertEqual(try containerContents(fixture.container)["log.txt"],
                       Array(String(repeating: "d", count: 10) + String(repeating: "c", count: 40)
                             + String(repeating: "a", count: 50) + String(repeating: "b", count: 100)).map { $0.asciiValue! })
    }

    /// `cp big mnt/ && sync mnt/big` fsyncs through a read-only descriptor: that save must be
    /// the only one. (The spool once stayed "pending" while the reader held it, so the next
    /// commit — the scheduler, a signing, the unmount — deflated the whole file a second time.)
    func testAFileSavedWhileAReaderHoldsItIsNotSavedAgain() throws {
        let fixture = try newMount()
        let big = textLikeBytes(count: 3 << 20)
        try writeFile(big, fixture.folder + "/big.txt")
        let result = try Shell.python("""
            import os, shutil, sys
            shutil.copyfile(sys.argv[1], sys.argv[2])
            fd = os.open(sys.argv[2], os.O_RDONLY)
            os.fsync(fd)                      # saves now, while this reader holds the file
            first = os.stat(sys.argv[3]).st_ino
            os.close(fd)
            fd = os.open(sys.argv[4], os.O_RDONLY)
            os.fsync(fd)                      # a commit with nothing new must not save again
            os.close(fd)
            print(first, os.stat(sys.argv[3]).st_ino)
            """, [fixture.folder + "/big.txt", fixture.path("big.txt"), fixture.container, fixture.path("a.txt")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let inodes = result.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        XCTAssertEqual(inodes.count, 2, result.stdout)
        XCTAssertEqual(inodes.first, inodes.last, "the container was saved a second time")
        XCTAssertEqual(try containerContents(fixture.container)["big.txt"], big)
        XCTAssertEqual(try readFile(fixture.path("big.txt")), big)
        try fixture.unmount()
        XCTAssertEqual(try containerContents(fixture.container)["big.txt"], big)
    }

    func testEditorsThatSaveThroughATemporaryAndRenameWork() throws {
        let fixture = try newMount()
        // vim with its default backup and swap files, driven without a terminal.
        let vim = try Shell.sh("cd '\(fixture.mountpoint)' && vim -Es -u NONE -i NONE -c 'set backup writebackup' -c '%s/alpha/omega/' -c 'wq' a.txt")
        XCTAssertEqual(vim.status, 0, vim.stderr + vim.stdout)
        XCTAssertEqual(try readFile(fixture.path("a.txt")), Array("omega\n".utf8))
        // The gedit/LibreOffice way: write a temporary, then rename it over the original.
        let python = try Shell.python("""
            import os, sys
            d = sys.argv[1]
            with open(os.path.join(d, '.a.txt.tmp-1234'), 'w') as f:
                f.write('saved by an editor\\n'); f.flush(); os.fsync(f.fileno())
            os.rename(os.path.join(d, '.a.txt.tmp-1234'), os.path.join(d, 'a.txt'))
            """, [fixture.mountpoint])
        XCTAssertEqual(python.status, 0, python.stderr)
        XCTAssertEqual(try readFile(fixture.path("a.txt")), Array("saved by an editor\n".utf8))
        try fixture.unmount()
        let saved = try containerContents(fixture.container)
        // vim's backup (a.txt~) is removed after a successful write; nothing else may appear.
        XCTAssertEqual(Set(saved.keys), ["a.txt"])
        XCTAssertEqual(saved["a.txt"], Array("saved by an editor\n".utf8))
    }

    func testFoundationFileAPIsWork() throws {
        let fixture = try newMount()
        let manager = FileManager.default
        try Data("foundation\n".utf8).write(to: URL(fileURLWithPath: fixture.path("f.txt")), options: .atomic)
        try manager.createDirectory(atPath: fixture.path("dir/sub"), withIntermediateDirectories: true)
        try manager.copyItem(atPath: fixture.path("f.txt"), toPath: fixture.path("dir/sub/copy.txt"))
        try manager.moveItem(atPath: fixture.path("a.txt"), toPath: fixture.path("dir/a.txt"))
        try manager.removeItem(atPath: fixture.path("f.txt"))
        XCTAssertEqual(try manager.contentsOfDirectory(atPath: fixture.path("dir")).sorted(), ["a.txt", "sub"])
        try fixture.unmount()
        let saved = try containerContents(fixture.container)
        XCTAssertEqual(Set(saved.keys), ["dir/a.txt", "dir/sub/copy.txt"])
        XCTAssertEqual(saved["dir/sub/copy.txt"], Array("foundation\n".utf8))
    }

    func testBadNamesAreRefusedWithAReason() throws {
        let fixture = try newMount()
        let result = try Shell.sh("echo x > '\(fixture.mountpoint)/back\\slash.txt'")
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("Invalid argument"), result.stderr)
        let error = try String(contentsOfFile: fixture.path(".asicfs/status/last-error"), encoding: .utf8)
        XCTAssertTrue(error.contains("'\\'"), error)
        try fixture.unmount()
    }

    func testNamesWithControlOrBidirectionalCharactersAreRefusedAndLastErrorStaysOneLine() throws {
        let fixture = try newMount()
        let m = fixture.mountpoint
        // Created (open O_CREAT) and renamed to: both EINVAL, and the container keeps its one file.
        let fd = open(m + "/invoice-\u{202E}fdp.exe", O_WRONLY | O_CREAT, 0o644)
        let openError = errno
        if fd >= 0 { close(fd) }
        XCTAssertEqual(fd, -1)
        XCTAssertEqual(openError, EINVAL)
        XCTAssertEqual(rename(m + "/a.txt", m + "/csi-\u{9B}31m\n.txt"), -1)
        XCTAssertEqual(errno, EINVAL)
        let error = try String(contentsOfFile: fixture.path(".asicfs/status/last-error"), encoding: .utf8)
        XCTAssertTrue(error.contains("'csi-\\u{009B}31m\\n.txt' is not allowed: it contains the control character U+009B"), error)
        XCTAssertEqual(error.filter { $0 == "\n" }.count, 1, "one line: \(error)")
        XCTAssertFalse(error.unicodeScalars.contains { $0.value == 0x9B }, error)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m).sorted(), [".asicfs", "a.txt"])
        try fixture.unmount()
        XCTAssertEqual(Set(try containerContents(fixture.container).keys), ["a.txt"])
    }

    func testASignedContainerRefusesEveryChangeWithEPERM() throws {
        let fixture = try MountFixture(self)
        try MountFixture.makeSigned(fixture.container, Self.shared)
        let before = try readFile(fixture.container)
        try fixture.mount()
        let m = fixture.mountpoint
        for command in ["echo x > '\(m)/new.txt'", "echo x >> '\(m)/test.txt'", "rm '\(m)/test.txt'",
                        "mv '\(m)/test.txt' '\(m)/other.txt'", "touch '\(m)/test.txt'", "mkdir '\(m)/dir'",
                        "truncate -s 0 '\(m)/test.txt'"] {
            let result = try Shell.sh(command)
            XCTAssertNotEqual(result.status, 0, command)
            XCTAssertTrue(result.stderr.contains("Operation not permitted"), "\(command): \(result.stderr)")
        }
        let error = try String(contentsOfFile: m + "/.asicfs/status/last-error", encoding: .utf8)
        XCTAssertTrue(error.contains("the container is signed"), error)
        let mode = try FileManager.default.attributesOfItem(atPath: m + "/test.txt")[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o444)
        let unzip = try Shell.run("unzip", ["-p", fixture.container, "test.txt"])
        XCTAssertEqual(try readFile(m + "/test.txt"), Array(unzip.stdout.utf8))
        try fixture.unmount()
        XCTAssertEqual(try readFile(fixture.container), before)
    }

    func testAReadOnlyMountRefusesChanges() throws {
        let fixture = try MountFixture(self)
        try writeFile(Array("alpha\n".utf8), fixture.folder + "/a.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/a.txt"]).status, 0)
        let before = try readFile(fixture.container)
        try fixture.mount(["ro"])
        let result = try Shell.sh("echo x > '\(fixture.mountpoint)/b.txt'")
        XCTAssertTrue(result.stderr.contains("Read-only file system"), result.stderr)
        XCTAssertEqual(try readFile(fixture.path("a.txt")), Array("alpha\n".utf8))
        try fixture.unmount()
        XCTAssertEqual(try readFile(fixture.container), before)
    }
}

import Foundation
import TestTools
import XCTest

/// A browse mount made by root with `-o allow_other` over a tree another user can write to
/// (`shared/`, owned by `SecondUser`): through the mount that user gets nothing they could not
/// get on the disk itself (issue 29, items A1, A4 and the real-file parts of 18).
///
/// The symlink swaps are deterministic without a hook: a `stat` through the mount makes the
/// kernel keep the name and its attributes for the cache time (1 s), and a request on that name
/// within it reaches the daemon with no new lookup, whatever is on disk now. Each script does
/// stat, swap and request one after the other, in well under that second.
final class BrowseSecurityTests: XCTestCase {
    static let secretText = "root-secret-bytes"
    static let victimText = "victim-bytes"

    private func sharedMount() throws -> BrowseFixture {
        let fixture = try BrowseFixture.sharedWithSecondUser(self)
        try fixture.start(["allow_other"])
        return fixture
    }

    /// A root-owned file outside the tree.
    private func rootFile(_ fixture: BrowseFixture, _ name: String, _ text: String, mode: mode_t) throws -> String {
        let path = fixture.mount.folder + "/" + name
        try writeFile(Array(text.utf8), path)
        chmod(path, mode)
        return path
    }

    private static let attempts = BrowseFixture.attempts

    func testALinkSwappedInAfterAStatIsNeverFollowed() throws {
        let fixture = try sharedMount()
        let secret = try rootFile(fixture, "shadow", Self.secretText, mode: 0o600)
        let victim = try rootFile(fixture, "victim", Self.victimText, mode: 0o644)
        let rootFolder = fixture.mount.folder + "/root-only"
        try FileManager.default.createDirectory(atPath: rootFolder, withIntermediateDirectories: true)
        chmod(rootFolder, 0o700)
        try writeFile(Array(Self.secretText.utf8), rootFolder + "/secret.txt")

        let out = try runAsSecondUser(Self.attempts + """
            m, d, secret, victim, folder = sys.argv[1:6]
            def fresh(name):
                # The user's own file, seen through the mount: the kernel now holds its entry.
                open(d + '/' + name, 'w').write('mine ' * 20)
                os.stat(m + '/' + name)
            def swap(name, target):
                os.symlink(target, d + '/.swap'); os.rename(d + '/.swap', d + '/' + name)
            fresh('r'); swap('r', secret); attempt('read', lambda: open(m + '/r').read())
            fresh('w'); swap('w', victim); attempt('write', lambda: open(m + '/w', 'r+').write('overwritten'))
            fresh('t'); swap('t', victim); attempt('truncate', lambda: os.truncate(m + '/t', 0))
            fresh('c'); swap('c', victim); attempt('chmod', lambda: os.chmod(m + '/c', 0o4777))
            fresh('x'); swap('x', victim); attempt('setxattr', lambda: os.setxattr(m + '/x', 'user.evil', b'1'))
            # A folder on the way swapped for a link to a root-only folder.
            os.mkdir(d + '/sub'); open(d + '/sub/secret.txt', 'w').write('mine ' * 20)
            os.stat(m + '/sub/secret.txt')
            os.rename(d + '/sub', d + '/sub.old'); os.symlink(folder, d + '/sub')
            attempt('read through a folder', lambda: open(m + '/sub/secret.txt').read())
            print(json.dumps(out))
            """, [fixture.path("shared"), fixture.real("shared"), secret, victim, rootFolder])

        for (key, value) in out {
            XCTAssertFalse(value.contains(Self.secretText), "\(key): \(value)")
            XCTAssertTrue(value.hasPrefix("error"), "\(key): \(value)")
        }
        XCTAssertEqual(out.count, 6, "\(out)")
        XCTAssertEqual(String(decoding: try readFile(victim), as: UTF8.self), Self.victimText)
        var st = stat()
        XCTAssertEqual(stat(victim, &st), 0)
        XCTAssertEqual(st.st_mode & 0o7777, 0o644)
        XCTAssertEqual(try realAttributes(victim), [:])
        try fixture.mount.unmount()
    }

    /// Requests run with the caller's rights of the moment, not the modes the kernel cached:
    /// a file or container made unreadable on disk after a stat stays closed, a root-only file
    /// is closed, and what the user makes through the mount is theirs.
    func testAnotherUserActsWithTheirOwnRightsAndOwnsWhatTheyMake() throws {
        let fixture = try sharedMount()
        try writeFile(Array(Self.secretText.utf8), fixture.real("private.txt"))
        chmod(fixture.real("private.txt"), 0o600)
        try fixture.makeContainer("shared/own.asice", ["inside.txt": Self.secretText])
        try SecondUser.own(fixture.real("shared/own.asice"))

        let out = try runAsSecondUser(Self.attempts + """
            m, d, top = sys.argv[1:4]
            attempt('root-only file', lambda: open(top + '/private.txt').read())
            open(d + '/closed.txt', 'w').write('mine ' * 20)
            os.stat(m + '/closed.txt'); os.chmod(d + '/closed.txt', 0)
            attempt('file closed after a stat', lambda: open(m + '/closed.txt').read())
            os.stat(m + '/own.asice'); os.chmod(d + '/own.asice', 0)
            attempt('container closed after a stat', lambda: os.listdir(m + '/own.asice'))
            attempt('new file', lambda: open(m + '/new.txt', 'w').write('new'))
            attempt('new folder', lambda: os.mkdir(m + '/folder'))
            attempt('new link', lambda: os.symlink('new.txt', m + '/link'))
            attempt('hard link', lambda: os.link(m + '/new.txt', m + '/hard.txt'))
            attempt('new container', lambda: os.mkdir(m + '/made.asice'))
            attempt('file in the new container', lambda: open(m + '/made.asice/in.txt', 'w').write('in'))
            print(json.dumps(out))
            """, [fixture.path("shared"), fixture.real("shared"), fixture.mountpoint])

        XCTAssertEqual(out["root-only file"], "error EACCES")
        XCTAssertEqual(out["file closed after a stat"], "error EACCES")
        XCTAssertEqual(out["container closed after a stat"], "error EACCES")
        for key in ["new file", "new folder", "new link", "hard link", "new container", "file in the new container"] {
            XCTAssertTrue(out[key]?.hasPrefix("done") ?? false, "\(key): \(out[key] ?? "-")")
        }
        let (user, group) = try SecondUser.ids()
        func assertOwned(_ relative: String, line: UInt = #line) {
            var st = stat()
            XCTAssertEqual(lstat(fixture.real("shared/" + relative), &st), 0, relative, line: line)
            XCTAssertEqual(st.st_uid, user, relative, line: line)
            XCTAssertEqual(st.st_gid, group, relative, line: line)
        }
        for name in ["new.txt", "folder", "link", "made.asice"] { assertOwned(name) }
        var new = stat(), hard = stat()
        XCTAssertEqual(lstat(fixture.real("shared/new.txt"), &new), 0)
        XCTAssertEqual(lstat(fixture.real("shared/hard.txt"), &hard), 0)
        XCTAssertEqual(new.st_ino, hard.st_ino)
        XCTAssertEqual(new.st_nlink, 2)
        // Supplementary groups count: a file of group 4242, mode 0640, opens for a member only.
        try writeFile(Array("group".utf8), fixture.real("group.txt"))
        XCTAssertEqual(chown(fixture.real("group.txt"), 0, 4242), 0)
        chmod(fixture.real("group.txt"), 0o640)
        let read = Self.attempts + "attempt('read', lambda: open(sys.argv[1]).read()); print(json.dumps(out))"
        XCTAssertEqual(try runAsSecondUser(read, [fixture.path("group.txt")], groups: [4242])["read"], "done 'group'")
        XCTAssertEqual(try runAsSecondUser(read, [fixture.path("group.txt")], groups: [4243])["read"], "error EACCES")
        try fixture.mount.unmount()
        // Saved by the daemon (root) and still the user's.
        assertOwned("made.asice")
        XCTAssertEqual(try containerContents(fixture.real("shared/made.asice")), ["in.txt": Array("in".utf8)])
    }

    /// A container is opened by the daemon, by path: a folder on the way swapped for a link
    /// after the caller's right to read the container was checked must not lead it to another
    /// container (here a root-only one). The daemon is held between the check and the open
    /// (ASICFS_TEST_HOLD_CONTAINER_OPEN) while the folder is swapped.
    func testAFolderSwappedForALinkWhileAContainerOpensLeadsNowhere() throws {
        let fixture = try BrowseFixture(self)
        for path in [fixture.mount.folder, fixture.tree, fixture.mountpoint] { chmod(path, 0o755) }
        try fixture.makeContainer("shared/sub/own.asice", ["mine.txt": "mine"])
        for relative in ["shared", "shared/sub", "shared/sub/own.asice"] { try SecondUser.own(fixture.real(relative)) }
        let rootFolder = fixture.mount.folder + "/root-only"
        try FileManager.default.createDirectory(atPath: rootFolder, withIntermediateDirectories: true)
        chmod(rootFolder, 0o700)
        let sources = fixture.mount.folder + "/secret.txt"
        try writeFile(Array(Self.secretText.utf8), sources)
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", rootFolder + "/own.asice", sources]).status, 0)
        let gate = fixture.mount.folder + "/hold-open"
        addTeardownBlock { unlink(gate) }
        try fixture.start(["allow_other"], environment: ["ASICFS_TEST_HOLD_CONTAINER_OPEN": gate])
        try writeFile([], gate)

        let output = fixture.mount.folder + "/listing"
        let lister = try Shell.spawn(SecondUser.setpriv, try SecondUser.command("/usr/bin/python3", ["-c", Self.attempts + """
            attempt('list', lambda: sorted(os.listdir(sys.argv[1])))
            print(json.dumps(out))
            """, fixture.path("shared/sub/own.asice")]), stdout: output, stderr: output + ".err")
        XCTAssertTrue(eventually(10) { access(gate + ".held", F_OK) == 0 }, "the open was not held")
        XCTAssertEqual(rename(fixture.real("shared/sub"), fixture.real("shared/sub.old")), 0)
        XCTAssertEqual(symlink(rootFolder, fixture.real("shared/sub")), 0)
        unlink(gate)
        XCTAssertEqual(Shell.wait(lister), 0, (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? "")
        let listing = try String(contentsOfFile: output, encoding: .utf8)
        XCTAssertFalse(listing.contains("secret.txt"), listing)
        XCTAssertTrue(listing.contains("error"), listing)
        try fixture.mount.unmount()
    }

    /// A4: `user.asicfs.*` is only ever asicfs's own verdict on a container it opened; a real
    /// folder named like a container with those attributes set by hand shows none of them. Other
    /// attributes pass through both ways; another user cannot set the namespaces that need the
    /// daemon's capabilities.
    func testRealFilesNeverShowOrTakeAsicfsAttributes() throws {
        let fixture = try sharedMount()
        let folder = fixture.real("shared/x.asice"), file = fixture.real("shared/y.txt")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try writeFile(Array("y".utf8), file)
        for path in [folder, file] {
            let set = try Shell.run("/usr/bin/setfattr", ["-n", "user.asicfs.status", "-v", "VALID", path])
            XCTAssertEqual(set.status, 0, set.stderr)
            XCTAssertEqual(try Shell.run("/usr/bin/setfattr", ["-n", "user.asicfs.signers", "-v", "Someone Else", path]).status, 0)
            XCTAssertEqual(try Shell.run("/usr/bin/setfattr", ["-n", "user.note", "-v", "kept", path]).status, 0)
            try SecondUser.own(path)
        }
        let script = Self.attempts + """
            m = sys.argv[1]
            for name in ['x.asice', 'y.txt']:
                attempt('list ' + name, lambda: sorted(os.listxattr(m + '/' + name)))
                attempt('get ' + name, lambda: os.getxattr(m + '/' + name, 'user.asicfs.status'))
                attempt('note ' + name, lambda: os.getxattr(m + '/' + name, 'user.note'))
            attempt('set asicfs', lambda: os.setxattr(m + '/y.txt', 'user.asicfs.status', b'VALID'))
            attempt('remove asicfs', lambda: os.removexattr(m + '/y.txt', 'user.asicfs.status'))
            attempt('set user', lambda: os.setxattr(m + '/y.txt', 'user.added', b'v'))
            attempt('remove user', lambda: os.removexattr(m + '/y.txt', 'user.note'))
            attempt('set trusted', lambda: os.setxattr(m + '/y.txt', 'trusted.evil', b'1'))
            # An ACL (system.posix_acl_access, version 2): owner rw, user 65534 r, group r, mask r, other none.
            import struct
            acl = struct.pack('<I', 2) + b''.join(struct.pack('<HHI', tag, perm, ident) for tag, perm, ident in
                [(1, 6, 0xffffffff), (2, 4, 65534), (4, 4, 0xffffffff), (0x10, 4, 0xffffffff), (0x20, 0, 0xffffffff)])
            attempt('set acl', lambda: os.setxattr(m + '/x.asice', 'system.posix_acl_access', acl))
            attempt('get acl', lambda: os.getxattr(m + '/x.asice', 'system.posix_acl_access') == acl)
            print(json.dumps(out))
            """
        let out = try runAsSecondUser(script, [fixture.path("shared")])
        for name in ["x.asice", "y.txt"] {
            XCTAssertEqual(out["list " + name], "done ['user.note']", name)
            XCTAssertEqual(out["get " + name], "error ENODATA", name)
            XCTAssertEqual(out["note " + name], "done b'kept'", name)
        }
        XCTAssertEqual(out["set asicfs"], "error EPERM")
        XCTAssertEqual(out["remove asicfs"], "error EPERM")
        XCTAssertEqual(out["set user"], "done None")
        XCTAssertEqual(out["remove user"], "done None")
        XCTAssertEqual(out["set trusted"], "error EPERM")
        XCTAssertEqual(out["set acl"], "done None")
        XCTAssertEqual(out["get acl"], "done True")
        let acl = try Shell.python("import os, sys; print('system.posix_acl_access' in os.listxattr(sys.argv[1]))", [folder])
        XCTAssertEqual(acl.stdout, "True\n", acl.stderr)
        // The real file's own asicfs attributes are untouched; the user's change is there.
        XCTAssertEqual(try realAttributes(file), ["user.asicfs.status": "VALID", "user.asicfs.signers": "Someone Else", "user.added": "v"])
        // The mount's own user (root) does not see them either.
        let own = try Shell.python("import os, sys; print(sorted(os.listxattr(sys.argv[1])))", [fixture.path("shared/x.asice")])
        XCTAssertEqual(own.stdout, "['system.posix_acl_access', 'user.note']\n", own.stderr)
        try fixture.mount.unmount()
    }
}

/// A real file's extended attributes, all namespaces, read as root (name -> value).
private func realAttributes(_ path: String) throws -> [String: String] {
    let result = try Shell.python("""
        import os, sys, json
        p = sys.argv[1]
        print(json.dumps({n: os.getxattr(p, n, follow_symlinks=False).decode() for n in os.listxattr(p, follow_symlinks=False)}))
        """, [path])
    guard result.status == 0 else { throw MountError("xattrs of \(path): \(result.stderr)") }
    return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: String] ?? [:]
}

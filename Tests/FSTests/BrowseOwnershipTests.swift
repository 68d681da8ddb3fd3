import Foundation
import TestTools
import XCTest

/// Who may change what in a root `allow_other` browse mount (issue 29, item 16): a container's
/// data files, its folder and its `.asicfs` carry the container file's owner and group, so the
/// kernel (default_permissions) lets the container's owner edit them and nobody else; and
/// `-o umask=` takes its bits away from everything shown, real files and folders too.
final class BrowseOwnershipTests: XCTestCase {
    private func sharedMount(_ options: [String] = []) throws -> BrowseFixture {
        let fixture = try BrowseFixture.sharedWithSecondUser(self)
        try fixture.makeContainer("shared/own.asice", ["a.txt": "first"])
        try SecondUser.own(fixture.real("shared/own.asice"))
        try fixture.makeContainer("shared/root.asice", ["b.txt": "root's"])
        chmod(fixture.real("shared/root.asice"), 0o644)
        try fixture.start(["allow_other"] + options)
        return fixture
    }

    private static let attempts = BrowseFixture.attempts

    /// The container's owner edits its data files; another user cannot; and nobody but the
    /// daemon's user starts a signing (its request files stay root's).
    func testAContainersOwnerEditsItsDataFilesAndNobodyElseCanWriteThem() throws {
        let fixture = try sharedMount()
        let out = try runAsSecondUser(Self.attempts + """
            m = sys.argv[1]
            for name in ['own.asice', 'own.asice/a.txt', 'own.asice/.asicfs', 'own.asice/.asicfs/sign/pkcs12',
                         'root.asice/b.txt']:
                attempt('owner ' + name, lambda: owner(m + '/' + name))
            attempt('listed owners', lambda: sorted((e.name, owner(e.path)) for e in os.scandir(m + '/own.asice/.asicfs/sign')))
            def edit(path, text):
                with open(path, 'r+') as f:
                    f.seek(0, 2); f.write(text)
            attempt('edit own', lambda: edit(m + '/own.asice/a.txt', ' and more'))
            attempt('truncate own', lambda: os.truncate(m + '/own.asice/a.txt', 14))
            attempt('edit root', lambda: edit(m + '/root.asice/b.txt', ' not mine'))
            attempt('truncate root', lambda: os.truncate(m + '/root.asice/b.txt', 0))
            attempt('new in root', lambda: open(m + '/root.asice/c.txt', 'w').write('x'))
            # A signing reads keys and passphrase files with the daemon's (root's) rights.
            attempt('sign own', lambda: open(m + '/own.asice/.asicfs/sign/pkcs12', 'w').write('file=/root/key.p12'))
            print(json.dumps(out))
            """, [fixture.path("shared")])

        let (user, group) = try SecondUser.ids()
        for name in ["own.asice", "own.asice/a.txt", "own.asice/.asicfs"] {
            XCTAssertEqual(out["owner " + name], "done '\(user):\(group)'", name)
        }
        XCTAssertEqual(out["owner root.asice/b.txt"], "done '0:0'")
        XCTAssertEqual(out["owner own.asice/.asicfs/sign/pkcs12"], "done '0:0'")
        XCTAssertTrue(out["listed owners"]?.contains("('pkcs12', '0:0')") ?? false, out["listed owners"] ?? "-")
        XCTAssertFalse(out["listed owners"]?.contains("\(user):") ?? true, out["listed owners"] ?? "-")
        XCTAssertEqual(out["sign own"], "error EACCES")
        XCTAssertEqual(out["edit own"], "done None")
        XCTAssertEqual(out["truncate own"], "done None")
        for key in ["edit root", "truncate root", "new in root"] { XCTAssertEqual(out[key], "error EACCES", key) }
        try fixture.mount.unmount()
        XCTAssertEqual(try containerContents(fixture.real("shared/own.asice")), ["a.txt": Array("first and more".utf8)])
        XCTAssertEqual(try containerContents(fixture.real("shared/root.asice")), ["b.txt": Array("root's".utf8)])
        // Saved by the daemon (root) and still the user's.
        var st = stat()
        XCTAssertEqual(stat(fixture.real("shared/own.asice"), &st), 0)
        XCTAssertEqual(st.st_uid, user)
    }

    /// `umask=077`: nothing is shown with group or other bits, real files and folders included,
    /// so (default_permissions) another user reads nothing, even a file that is 0644 on disk.
    func testUmaskHidesGroupAndOtherBitsOfEverythingShown() throws {
        let fixture = try BrowseFixture(self)
        for path in [fixture.mount.folder, fixture.tree, fixture.mountpoint] { chmod(path, 0o755) }
        try FileManager.default.createDirectory(atPath: fixture.real("folder"), withIntermediateDirectories: true)
        chmod(fixture.real("folder"), 0o755)
        try writeFile(Array("public".utf8), fixture.real("folder/public.txt"))
        chmod(fixture.real("folder/public.txt"), 0o644)
        try writeFile(Array("run".utf8), fixture.real("tool.sh"))
        chmod(fixture.real("tool.sh"), 0o4755)
        try fixture.makeContainer("c.asice", ["in.txt": "inside"])
        chmod(fixture.real("c.asice"), 0o644)
        try fixture.start(["allow_other", "umask=077"])

        var modes: [String: mode_t] = [:]
        for name in ["folder", "folder/public.txt", "tool.sh", "c.asice", "c.asice/in.txt", "c.asice/.asicfs"] {
            var st = stat()
            XCTAssertEqual(lstat(fixture.path(name), &st), 0, name)
            modes[name] = st.st_mode & 0o7777
        }
        XCTAssertEqual(modes, ["folder": 0o700, "folder/public.txt": 0o600, "tool.sh": 0o4700,
                               "c.asice": 0o700, "c.asice/in.txt": 0o600, "c.asice/.asicfs": 0o500])
        // A listing (READDIRPLUS) shows the same.
        let listed = try Shell.python("""
            import os, sys, stat
            print(sorted((e.name, oct(stat.S_IMODE(e.stat(follow_symlinks=False).st_mode))) for e in os.scandir(sys.argv[1])))
            """, [fixture.path("folder")])
        XCTAssertEqual(listed.stdout, "[('public.txt', '0o600')]\n", listed.stderr)

        let out = try runAsSecondUser(Self.attempts + """
            m = sys.argv[1]
            attempt('read real', lambda: open(m + '/folder/public.txt').read())
            attempt('list real', lambda: os.listdir(m + '/folder'))
            attempt('read data', lambda: open(m + '/c.asice/in.txt').read())
            print(json.dumps(out))
            """, [fixture.mountpoint])
        for key in ["read real", "list real", "read data"] { XCTAssertEqual(out[key], "error EACCES", key) }
        // Only what is shown changes: the files on disk keep their modes.
        var st = stat()
        XCTAssertEqual(stat(fixture.real("folder/public.txt"), &st), 0)
        XCTAssertEqual(st.st_mode & 0o7777, 0o644)
        try fixture.mount.unmount()
    }
}

import Foundation
import TestTools
import XCTest

/// Without XDG_RUNTIME_DIR (su, cron, ssh without a session) `asicfs open` mounts under
/// `/tmp/asicfs-UID`, and daemons keep their pid and outcome files there (issue 29, item A3).
/// Another user who makes that name first must not get a say: the OpenSSH/tmux rule.
final class RuntimeFolderTests: XCTestCase {
    private var user: SecondUser!
    private var attacker: SecondUser!
    private var base = ""
    private var runtime: String { "/tmp/asicfs-\(user.uid)" }

    override func setUpWithError() throws {
        user = try SecondUser.account(SecondUser.thirdName)
        attacker = try SecondUser.account()
        base = NSTemporaryDirectory() + "asicfs-runtime-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: base + "/evil", withIntermediateDirectories: true)
        XCTAssertEqual(chmod(base, 0o755), 0)
        XCTAssertEqual(chown(base + "/evil", attacker.uid, attacker.gid), 0)
        XCTAssertEqual(chmod(base + "/evil", 0o777), 0)
        try writeFile(Array("a".utf8), base + "/a.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", base + "/invoice.asice", base + "/a.txt"]).status, 0)
        XCTAssertEqual(chown(base + "/invoice.asice", user.uid, user.gid), 0)
        // Only these tests use this user's runtime folder.
        unmountEverything(below: runtime)
        _ = try Shell.run("/bin/rm", ["-rf", runtime])
        addTeardownBlock { [base, runtime] in
            unmountEverything(below: base)
            unmountEverything(below: runtime)
            _ = try? Shell.run("/bin/rm", ["-rf", runtime, base])
        }
    }

    /// Runs asicfs as the user, with no XDG_RUNTIME_DIR.
    private func asUser(_ arguments: [String]) throws -> Shell.Output {
        try Shell.run("/usr/bin/env", ["-u", "XDG_RUNTIME_DIR", "/usr/bin/setpriv"] + user.setprivArguments()
                      + [MountFixture.binary] + arguments)
    }

    private func assertRefused(_ result: Shell.Output, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.status, 1, result.stderr, file: file, line: line)
        XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, "one line: \(result.stderr)", file: file, line: line)
        XCTAssertTrue(result.stderr.hasPrefix("asicfs: ") && result.stderr.contains(runtime) && result.stderr.contains("not private"),
                      result.stderr, file: file, line: line)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: base + "/evil"), [], "nothing made in the other user's folder",
                       file: file, line: line)
    }

    func testAPlantedSymlinkIsRefused() throws {
        XCTAssertEqual(try attacker.sh("ln -s \"$1\" \"$2\"", [base + "/evil", runtime]).status, 0)
        assertRefused(try asUser(["open", base + "/invoice.asice", "--no-file-manager"]))
        assertRefused(try asUser(["mount", base + "/invoice.asice", base + "/evil"]))
    }

    func testAFolderMadeByAnotherUserIsRefused() throws {
        XCTAssertEqual(try attacker.sh("mkdir -m 777 \"$1\"", [runtime]).status, 0)
        assertRefused(try asUser(["open", base + "/invoice.asice", "--no-file-manager"]))
    }

    func testTheUsersOwnFolderOpenToOthersIsRefused() throws {
        XCTAssertEqual(try Shell.run("/usr/bin/setpriv", user.setprivArguments() + ["mkdir", "-m", "755", runtime]).status, 0)
        assertRefused(try asUser(["open", base + "/invoice.asice", "--no-file-manager"]))
    }

    /// With nothing planted the folder is made private (0700, the user's) and used. (Whether the
    /// user may then mount depends on /dev/fuse here; the folder is made first either way.)
    func testTheFolderIsMadePrivateAndUsed() throws {
        let home = base + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        XCTAssertEqual(rename(base + "/invoice.asice", home + "/invoice.asice"), 0)
        XCTAssertEqual(chown(home, user.uid, user.gid), 0)
        let opened = try asUser(["open", home + "/invoice.asice", "--no-file-manager"])
        if opened.status == 0 {
            XCTAssertEqual(opened.stdout, runtime + "/invoice.asice\n")
            XCTAssertEqual(try asUser(["close", home + "/invoice.asice"]).status, 0)
        }
        XCTAssertFalse(opened.stderr.contains("not private"), opened.stderr)
        var st = stat()
        XCTAssertEqual(lstat(runtime, &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFDIR)
        XCTAssertEqual(st.st_mode & 0o777, 0o700)
        XCTAssertEqual(st.st_uid, user.uid)
        // The mount point was made inside it; an open that failed (no /dev/fuse for this user)
        // removes it again, as every failed open leaves nothing behind.
        XCTAssertEqual(lstat(runtime + "/invoice.asice", &st) == 0, opened.status == 0, opened.stderr)
    }
}

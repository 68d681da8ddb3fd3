import Foundation
import TestTools
import XCTest

/// What the browse tests of another user's rights share: a tree everyone may enter with a folder
/// `shared/` that `SecondUser` owns, and Python scripts run as that user that report each
/// attempt's outcome.
extension BrowseFixture {
    /// A browse fixture (not yet mounted) whose folders others may enter, with `shared/` in the
    /// tree owned by `SecondUser`.
    static func sharedWithSecondUser(_ test: XCTestCase) throws -> BrowseFixture {
        let fixture = try BrowseFixture(test)
        for path in [fixture.mount.folder, fixture.tree, fixture.mountpoint] { chmod(path, 0o755) }
        try FileManager.default.createDirectory(atPath: fixture.real("shared"), withIntermediateDirectories: true)
        try SecondUser.own(fixture.real("shared"))
        return fixture
    }

    /// The start of a script for `runAsSecondUser`: `attempt(key, f)` records 'done <result>' or
    /// 'error <errno name>' in `out`, which the script prints as JSON at its end; `owner(path)`
    /// and `mode(path)` describe a file.
    static let attempts = """
        import os, sys, json, errno, stat
        out = {}
        def attempt(key, f):
            try: out[key] = 'done ' + repr(f())
            except OSError as e: out[key] = 'error ' + errno.errorcode[e.errno]
        def owner(path):
            st = os.stat(path)
            return '%d:%d' % (st.st_uid, st.st_gid)
        def mode(path):
            return oct(stat.S_IMODE(os.lstat(path).st_mode))

        """
}

/// Runs Python `code` as `SecondUser` (with the supplementary `groups`) and returns the JSON
/// object of strings it prints.
func runAsSecondUser(_ code: String, _ arguments: [String], groups: [gid_t] = []) throws -> [String: String] {
    let result = try SecondUser.python(code, arguments, groups: groups)
    XCTAssertEqual(result.status, 0, result.stderr)
    let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    return try XCTUnwrap(object as? [String: String], result.stdout + result.stderr)
}

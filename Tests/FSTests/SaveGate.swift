import XCTest

/// The daemon's test hook ASICFS_TEST_HOLD_SAVES, from the test's side: while the gate file
/// exists every save stops after it has taken the view it will write (and `gate.held` exists),
/// so a test can change the mount, stop the daemon or unmount inside that window.
struct SaveGate {
    let path: String

    /// A gate in `folder`, removed when the test ends so that no daemon is left waiting (register
    /// it after the fixture: teardown blocks run last in, first out).
    init(in folder: String, _ test: XCTestCase) {
        path = folder + "/hold-saves"
        test.addTeardownBlock { [path] in unlink(path) }
    }

    var environment: [String: String] { ["ASICFS_TEST_HOLD_SAVES": path] }

    /// From now on saves stop after taking the view (until `release`).
    func hold() throws { try writeFile([], path) }

    /// Waits until a save is held.
    func waitForAHeldSave(_ file: StaticString = #filePath, line: UInt = #line) {
        let deadline = Date().addingTimeInterval(10)
        while access(path + ".held", F_OK) != 0 {
            if Date() > deadline { return XCTFail("no save started", file: file, line: line) }
            usleep(5_000)
        }
    }

    /// Lets the held save go on and waits until it has finished.
    func release() {
        unlink(path)
        let deadline = Date().addingTimeInterval(30)
        while access(path + ".held", F_OK) == 0 && Date() < deadline { usleep(5_000) }
    }
}

import TestTools
import XCTest

/// Damaged data in a mounted container: every read path verifies what it serves or fails with
/// EIO, whatever order the kernel's readahead sends the reads in, and keeps failing after.
final class MountDamageTests: XCTestCase {
    private func mounted(_ damage: DamagedContainer.Damage) throws -> (MountFixture, Int) {
        let fixture = try MountFixture(self)
        let first = try DamagedContainer.make(at: fixture.container, damage: damage)
        try fixture.mount(["ro"])
        return (fixture, first)
    }

    private func cat(_ path: String) throws -> Shell.Output {
        try Shell.run("/bin/sh", ["-c", "cat \"$1\" > /dev/null", "sh", path])
    }

    /// A deflated file whose bytes are wrong but inflate without complaint: `cat` exited 0
    /// with the wrong bytes (the decoder that reached the end had not started at byte 0).
    func testCatOfWrongBytesFailsAndKeepsFailing() throws {
        let (fixture, _) = try mounted(.wrongBytes)
        for attempt in 1...3 {
            let result = try cat(fixture.path("big.txt"))
            XCTAssertNotEqual(result.status, 0, "cat #\(attempt) succeeded")
            XCTAssertTrue(result.stderr.contains("Input/output error"), result.stderr)
        }
        // The start of the file is not served from the kernel's cache either.
        let head = try Shell.run("/bin/sh", ["-c", "head -c 4096 \"$1\" > /dev/null", "sh", fixture.path("big.txt")])
        XCTAssertNotEqual(head.status, 0)
        let lastError = try String(contentsOfFile: fixture.path(".asicfs/status/last-error"), encoding: .utf8)
        XCTAssertTrue(lastError.contains("'big.txt'") && lastError.contains("CRC-32"), lastError)
    }

    func testCatOfAStoredFileWithWrongBytesFails() throws {
        let (fixture, _) = try mounted(.wrongStoredBytes)
        XCTAssertNotEqual(try cat(fixture.path("big.txt")).status, 0)
        XCTAssertNotEqual(try cat(fixture.path("big.txt")).status, 0)
    }

    /// A stream that cannot be inflated past some point: reads there fail, from any offset.
    func testReadsPastACorruptStreamFail() throws {
        let (fixture, first) = try mounted(.corruptStream)
        let skip = (first + (256 << 10)) / 4096
        let dd = try Shell.run("dd", ["if=\(fixture.path("big.txt"))", "of=/dev/null", "bs=4096", "skip=\(skip)",
                                      "count=4", "status=none"])
        XCTAssertNotEqual(dd.status, 0, "a read past the damage succeeded")
        XCTAssertNotEqual(try cat(fixture.path("big.txt")).status, 0)
    }

    func testAnIntactFileReadsTheSameThroughTheMount() throws {
        let (fixture, _) = try mounted(.none)
        let through = try Shell.run("/bin/sh", ["-c", "sha256sum < \"$1\"", "sh", fixture.path("big.txt")])
        XCTAssertEqual(through.status, 0, through.stderr)
        let direct = try Shell.python("""
            import zipfile, sys, hashlib
            print(hashlib.sha256(zipfile.ZipFile(sys.argv[1]).read('big.txt')).hexdigest() + '  -')
            """, [fixture.container])
        XCTAssertEqual(through.stdout, direct.stdout)
    }
}

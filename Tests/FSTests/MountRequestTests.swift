import Foundation
import TestTools
import XCTest

/// What the kernel sends a container mount, counted with `ASICFS_TEST_REQUEST_LOG` (the opcode
/// of every request the mount reads, one per line).
final class MountRequestTests: XCTestCase {
    // Opcodes from <linux/fuse.h>.
    private let getxattr = 22, write = 16, create = 35

    private func opcodes(_ log: String) throws -> [Int] {
        try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { Int($0) }
    }

    /// Before a write to a FUSE file the kernel asks for `security.capability` (a GETXATTR
    /// round trip), before every write unless the file system said it removes set-id bits and
    /// capabilities itself (FUSE_HANDLE_KILLPRIV_V2); then once per file. A container mount
    /// says so: it has neither.
    func testAFileWrittenInManyWritesAsksForItsCapabilitiesOnce() throws {
        let fixture = try MountFixture(self)
        try writeFile(Array("alpha\n".utf8), fixture.folder + "/a.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/a.txt"]).status, 0)
        let log = fixture.folder + "/requests.log"
        try fixture.mount(environment: ["ASICFS_TEST_REQUEST_LOG": log])
        let big = textLikeBytes(count: 2 << 20)
        try writeFile(big, fixture.folder + "/big.txt")

        let before = try opcodes(log).count
        // dd writes it in 16 writes of 128 KiB.
        let copy = try Shell.sh("dd if='\(fixture.folder)/big.txt' of='\(fixture.mountpoint)/big.txt' bs=128k status=none")
        XCTAssertEqual(copy.status, 0, copy.stderr)
        let during = Array(try opcodes(log).dropFirst(before))
        XCTAssertEqual(during.filter { $0 == create }.count, 1, "\(during)")
        XCTAssertEqual(during.filter { $0 == write }.count, 16, "\(during)")
        XCTAssertEqual(during.filter { $0 == getxattr }.count, 1, "the kernel asked before every write: \(during)")

        // The mount's own attributes still answer.
        let status = try Shell.python("import os,sys; print(os.getxattr(sys.argv[1], 'user.asicfs.status').decode())", [fixture.mountpoint])
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertEqual(status.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "unsigned")

        try fixture.unmount()
        XCTAssertEqual(try containerContents(fixture.container)["big.txt"], big)
    }
}

import Foundation
import TestTools
import XCTest

/// What the kernel sends a container mount, counted with `ASICFS_TEST_REQUEST_LOG` (the opcode
/// of every request the mount reads, one per line).
final class MountRequestTests: XCTestCase {
    // Opcodes from <linux/fuse.h>.
    private let lookup = 1, getattr = 3, write = 16, release = 18, getxattr = 22, flush = 25, create = 35

    private func opcodes(_ log: String) throws -> [Int] {
        try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { Int($0) }
    }

    /// Before a write to a FUSE file through the page cache the kernel asks for
    /// `security.capability` (a GETXATTR round trip), before every write unless the file system
    /// said it removes set-id bits and capabilities itself (FUSE_HANDLE_KILLPRIV_V2); then once
    /// per file. A container mount says so: it has neither. (A file opened read-write is
    /// written through the page cache; a write-only one is not, see below.)
    func testAFileWrittenInManyWritesAsksForItsCapabilitiesOnce() throws {
        let fixture = try MountFixture(self)
        try writeFile(Array("alpha\n".utf8), fixture.folder + "/a.txt")
        XCTAssertEqual(try Shell.run(MountFixture.binary, ["create", "-q", fixture.container, fixture.folder + "/a.txt"]).status, 0)
        let log = fixture.folder + "/requests.log"
        try fixture.mount(environment: ["ASICFS_TEST_REQUEST_LOG": log])
        let big = textLikeBytes(count: 2 << 20)
        try writeFile(big, fixture.folder + "/big.txt")

        let before = try opcodes(log).count
        // 16 writes of 128 KiB through a read-write descriptor.
        let copy = try Shell.python("""
            import os, sys
            data = open(sys.argv[1], 'rb').read()
            fd = os.open(sys.argv[2], os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            for at in range(0, len(data), 128 << 10):
                os.write(fd, data[at:at + (128 << 10)])
            os.close(fd)
            """, [fixture.folder + "/big.txt", fixture.path("big.txt")])
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

    /// `cp` of small files in: per file LOOKUP twice (its stat, then the open with O_EXCL),
    /// CREATE, WRITE, RELEASE and GETATTR (its stat afterwards), six requests. Not FLUSH (the
    /// mount has none: after the first ENOSYS the kernel stops sending it) and not GETXATTR
    /// (`cp` opens the copy write-only, which the mount serves with direct_io). Before, eight.
    func testCopyingSmallFilesInCostsSixRequestsEach() throws {
        let fixture = try MountFixture(self)
        let log = fixture.folder + "/requests.log"
        try fixture.mount(["create"], environment: ["ASICFS_TEST_REQUEST_LOG": log])
        try FileManager.default.createDirectory(atPath: fixture.folder + "/src", withIntermediateDirectories: true)
        var expected: [String: [UInt8]] = [:]
        for index in 0..<50 {
            let bytes = Array("file \(index)\n".utf8) + textLikeBytes(count: 1000 + index * 37)
            try writeFile(bytes, fixture.folder + "/src/f\(index).txt")
            expected["f\(index).txt"] = bytes
        }
        // The first close of the mount asks FLUSH once.
        try writeFile(Array("first".utf8), fixture.path("first.txt"))
        expected["first.txt"] = Array("first".utf8)

        let before = try opcodes(log).count
        let copy = try Shell.sh("cp '\(fixture.folder)'/src/*.txt '\(fixture.mountpoint)/'")
        XCTAssertEqual(copy.status, 0, copy.stderr)
        let during = Array(try opcodes(log).dropFirst(before))
        func count(_ opcode: Int) -> Int { during.filter { $0 == opcode }.count }
        XCTAssertEqual(count(lookup), 100, "\(during)")
        XCTAssertEqual(count(create), 50, "\(during)")
        XCTAssertEqual(count(write), 50, "\(during)")
        XCTAssertEqual(count(getattr), 50, "\(during)")
        XCTAssertEqual(count(flush), 0, "\(during)")
        XCTAssertEqual(count(getxattr), 0, "\(during)")
        // (RELEASE is sent without waiting, so some may not have been read yet.)
        XCTAssertEqual(during.filter { $0 != release }.count, 250, "\(during)")

        try fixture.unmount()
        XCTAssertEqual(try containerContents(fixture.container), expected)
    }
}

@testable import ASiC
@testable import FS
import XCTest

/// The digest a spool computes in the background while it is written: right when the bytes
/// arrive in order, and given up for anything else (the save then hashes the bytes itself).
final class SpoolDigestTests: XCTestCase {
    private var folder = ""
    private var spools: SpoolFolder!

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "asicfs-spooldigest-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        addTeardownBlock { [folder] in try? FileManager.default.removeItem(atPath: folder) }
        spools = try SpoolFolder.make(forContainer: folder + "/container.asice")
    }

    /// 5 MiB and a bit of varied bytes, written in 128 KiB pieces (as cp writes through FUSE).
    private let bytes: [UInt8] = (0..<(5 << 20) + 4321).map { UInt8(truncatingIfNeeded: ($0 &* 2654435761) >> 13) }

    private func write(_ spool: Spool, _ range: Range<Int>) throws {
        try bytes[range].withUnsafeBytes { try spool.write($0, at: Int64(range.lowerBound)) }
    }

    private func writeInOrder(_ spool: Spool, upTo end: Int) throws {
        var offset = 0
        while offset < end {
            let next = min(end, offset + (128 << 10))
            try write(spool, offset..<next)
            offset = next
        }
    }

    private var expected: ContentDigest {
        let running = RunningContentDigest()
        bytes.withUnsafeBytes { running.update($0) }
        return running.finish()
    }

    func testBytesWrittenInOrderAreHashedWhileTheyArrive() throws {
        let spool = Spool(in: spools)
        try writeInOrder(spool, upTo: bytes.count)
        XCTAssertTrue(spool.isOnDisk)
        XCTAssertEqual(spool.digest.digest(ofSize: Int64(bytes.count)), expected)
        // Asked again (a save that is retried): the same answer.
        XCTAssertEqual(spool.digest.digest(ofSize: Int64(bytes.count)), expected)
        XCTAssertNil(spool.digest.digest(ofSize: Int64(bytes.count) - 1))
    }

    func testAWriteOutOfOrderGivesTheDigestUp() throws {
        let spool = Spool(in: spools)
        try writeInOrder(spool, upTo: bytes.count)
        try write(spool, 1000..<2000)  // the same bytes again, but not at the end
        XCTAssertNil(spool.digest.digest(ofSize: Int64(bytes.count)))

        let gap = Spool(in: spools)
        try writeInOrder(gap, upTo: 1 << 20)
        try write(gap, (2 << 20)..<bytes.count)
        try write(gap, (1 << 20)..<(2 << 20))
        XCTAssertNil(gap.digest.digest(ofSize: Int64(bytes.count)))
    }

    func testATruncationOrAWriteAfterTheDigestWasTakenGivesItUp() throws {
        let truncated = Spool(in: spools)
        try writeInOrder(truncated, upTo: bytes.count)
        try truncated.truncate(to: 3 << 20)
        XCTAssertNil(truncated.digest.digest(ofSize: 3 << 20))

        let appended = Spool(in: spools)
        try writeInOrder(appended, upTo: 3 << 20)
        XCTAssertNotNil(appended.digest.digest(ofSize: 3 << 20))
        try write(appended, (3 << 20)..<bytes.count)
        XCTAssertNil(appended.digest.digest(ofSize: Int64(bytes.count)))
    }

    func testASpoolThatStaysInMemoryNeedsNoDigest() throws {
        let small = Spool(in: spools)
        try write(small, 0..<1000)
        XCTAssertFalse(small.isOnDisk)
        XCTAssertNotNil(small.source.bytes)
        XCTAssertNil(small.source.digest)
    }
}

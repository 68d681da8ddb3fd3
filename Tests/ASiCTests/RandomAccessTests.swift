@testable import ASiC
import TestTools
import XCTest

/// Random access into stored and deflated entries through the seek index, from many threads,
/// and the checks that catch damaged or lying entries.
final class RandomAccessTests: XCTestCase {
    private var folder = ""
    private var payload: [UInt8] = []
    private var path = ""

    override func setUpWithError() throws {
        folder = try TestSupport.temporaryFolder(self)
        payload = textLikeBytes(count: 9 << 20 + 12345)
        try TestSupport.write(payload, to: folder + "/data.txt")
        try TestSupport.write(payload, to: folder + "/data.jpg") // stored: "already compressed" by name
        path = folder + "/ra.asice"
        try Container.create(at: path, files: [NewDataFile(sourcePath: folder + "/data.txt"),
                                               NewDataFile(sourcePath: folder + "/data.jpg")])
    }

    private func read(_ content: EntryContent, at offset: Int64, count: Int) throws -> [UInt8] {
        try Self.read(content, at: offset, count: count)
    }

    private static func read(_ content: EntryContent, at offset: Int64, count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = try buffer.withUnsafeMutableBytes { try content.read(into: $0, at: offset) }
        return Array(buffer.prefix(n))
    }

    func testRandomReadsReturnTheExactBytes() throws {
        let container = try Container.open(path)
        for name in ["data.txt", "data.jpg"] {
            let content = try container.content(of: name)
            XCTAssertEqual(content.size, Int64(payload.count))
            var generator = SystemRandomNumberGenerator()
            // Far end first (builds the index on the way), then anywhere, then the edges.
            var offsets: [Int64] = [Int64(payload.count - 10), 0, 5 << 20, (1 << 20) - 1, 1 << 20]
            for _ in 0..<200 { offsets.append(Int64.random(in: 0..<Int64(payload.count), using: &generator)) }
            for offset in offsets {
                let count = Int.random(in: 1...70_000, using: &generator)
                let expected = Array(payload[Int(offset)..<min(payload.count, Int(offset) + count)])
                XCTAssertEqual(try read(content, at: offset, count: count), expected, "\(name) at \(offset)")
            }
            XCTAssertEqual(try read(content, at: Int64(payload.count), count: 10), [], "reading at the end gives nothing")
            XCTAssertEqual(try read(content, at: Int64(payload.count) + 100, count: 10), [])
        }
    }

    func testTheSeekIndexIsBuiltAndStaysSmall() throws {
        let container = try Container.open(path)
        let content = try XCTUnwrap(try container.content(of: "data.txt") as? DeflatedEntryContent)
        _ = try read(content, at: Int64(payload.count - 1), count: 1)
        // About one checkpoint per MiB, each with a compressed 32 KiB window.
        XCTAssertGreaterThan(content.indexMemory, 0)
        XCTAssertLessThan(content.indexMemory, 10 * 32 << 10)
    }

    func testParallelReadersGetTheirOwnBytes() throws {
        let container = try Container.open(path)
        let content = try container.content(of: "data.txt")
        let failures = Failures()
        let payload = self.payload
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            var generator = SystemRandomNumberGenerator()
            for _ in 0..<40 {
                let offset = Int.random(in: 0..<payload.count, using: &generator)
                let count = min(4096 * (worker + 1), payload.count - offset)
                do {
                    let bytes = try Self.read(content, at: Int64(offset), count: count)
                    if bytes != Array(payload[offset..<offset + count]) { failures.add("worker \(worker) at \(offset)") }
                } catch {
                    failures.add("\(error)")
                }
            }
        }
        XCTAssertEqual(failures.all, [])
    }

    func testADamagedDeflateStreamIsAnErrorNotACrash() throws {
        var bytes = try TestSupport.read(path)
        let container = try Container.open(path)
        let entry = container.dataFile(named: "data.txt")!.entry
        let location = try container.location(of: entry)
        for i in 0..<64 { bytes[Int(location.dataOffset) + 5000 + i] ^= 0x5A }
        let damaged = try TestSupport.write(bytes, to: folder + "/damaged.asice")
        let broken = try Container.open(damaged)
        XCTAssertThrowsError(try broken.read("data.txt") { _ in }) { error in
            XCTAssertTrue("\(error)".contains("data of 'data.txt' is damaged"), "\(error)")
        }
        let content = try broken.content(of: "data.txt")
        XCTAssertThrowsError(try read(content, at: Int64(payload.count - 100), count: 100))
    }

    /// Large entries are checked and delivered on a helper thread: an error of the reader's own
    /// (a full disk while extracting, say) still stops the read and comes back unchanged.
    func testTheReadersOwnErrorStopsAStreamingRead() throws {
        struct Stop: Error {}
        let container = try Container.open(path)
        for name in ["data.txt", "data.jpg"] {
            var seen = 0
            XCTAssertThrowsError(try container.read(name) { piece in
                seen += piece.count
                if seen > 3 << 20 { throw Stop() }
            }) { XCTAssertTrue($0 is Stop, "\(name): \($0)") }
            XCTAssertLessThan(seen, 4 << 20, name)
        }
    }

    func testAStoredEntryWithAWrongCRCFailsExtraction() throws {
        var bytes = try TestSupport.read(path)
        let container = try Container.open(path)
        let location = try container.location(of: container.dataFile(named: "data.jpg")!.entry)
        bytes[Int(location.dataOffset) + 100] ^= 1
        let damaged = try TestSupport.write(bytes, to: folder + "/crc.asice")
        XCTAssertThrowsError(try Container.open(damaged).read("data.jpg") { _ in }) { error in
            XCTAssertTrue("\(error)".contains("CRC-32 mismatch"), "\(error)")
        }
    }

    /// A zip bomb declares a small size and inflates to much more: reading stops at the
    /// declared size with an error, in bounded memory.
    func testAnEntryLargerThanDeclaredIsRefused() throws {
        let bomb = folder + "/bomb.asice"
        let result = try Shell.python("""
            import zipfile, sys, struct
            with zipfile.ZipFile(sys.argv[1], 'w') as z:
                z.writestr(zipfile.ZipInfo('mimetype'), 'application/vnd.etsi.asic-e+zip')
                z.writestr('bomb.txt', b'\\0' * (50 << 20), zipfile.ZIP_DEFLATED)
                z.writestr('META-INF/manifest.xml', '<?xml version="1.0"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"/><manifest:file-entry manifest:full-path="bomb.txt" manifest:media-type="text/plain"/></manifest:manifest>')
            data = bytearray(open(sys.argv[1], 'rb').read())
            # Declare 1 MiB instead of 50 MiB in the central directory record of bomb.txt.
            pos = data.find(b'bomb.txt', data.find(b'PK\\x01\\x02')) - 46
            assert data[pos:pos + 4] == b'PK\\x01\\x02'
            struct.pack_into('<I', data, pos + 24, 1 << 20)
            open(sys.argv[1], 'wb').write(data)
            """, [bomb])
        XCTAssertEqual(result.status, 0, result.stderr)
        let container = try Container.open(bomb)
        XCTAssertEqual(container.dataFile(named: "bomb.txt")?.size, 1 << 20)
        var seen: Int64 = 0
        XCTAssertThrowsError(try container.read("bomb.txt") { seen += Int64($0.count) }) { error in
            XCTAssertTrue("\(error)".contains("zip bomb"), "\(error)")
        }
        XCTAssertLessThanOrEqual(seen, 1 << 20)
        let content = try container.content(of: "bomb.txt")
        XCTAssertThrowsError(try read(content, at: (1 << 20) - 10, count: 10)) { error in
            XCTAssertTrue("\(error)".contains("zip bomb"), "\(error)")
        }
    }

    func testOverlappingEntriesAreRefused() throws {
        // Point a second central record at the first entry's data (the overlapping-file bomb).
        let overlap = folder + "/overlap.asice"
        let result = try Shell.python("""
            import zipfile, sys, struct
            with zipfile.ZipFile(sys.argv[1], 'w') as z:
                z.writestr(zipfile.ZipInfo('mimetype'), 'application/vnd.etsi.asic-e+zip')
                z.writestr('a.txt', b'a' * 1000, zipfile.ZIP_DEFLATED)
                z.writestr('b.txt', b'b' * 1000, zipfile.ZIP_DEFLATED)
            data = bytearray(open(sys.argv[1], 'rb').read())
            a = data.find(b'PK\\x03\\x04', 10)
            posb = data.find(b'b.txt', data.find(b'PK\\x01\\x02')) - 46
            struct.pack_into('<I', data, posb + 42, a)
            open(sys.argv[1], 'wb').write(data)
            """, [overlap])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertThrowsError(try Container.open(overlap)) { error in
            XCTAssertTrue("\(error)".contains("overlaps"), "\(error)")
        }
    }

    func testTruncatedContainersAreRefused() throws {
        let bytes = try TestSupport.read(path)
        for length in [10, 100, bytes.count / 2, bytes.count - 1] {
            let cut = try TestSupport.write(Array(bytes.prefix(length)), to: folder + "/cut\(length).asice")
            XCTAssertThrowsError(try Container.open(cut), "\(length)") { error in
                XCTAssertTrue("\(error)".contains("ZIP"), "\(error)")
            }
        }
    }
}

/// Thread-safe collection of failure messages for concurrent tests.
final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func add(_ message: String) { lock.lock(); messages.append(message); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return messages }
}

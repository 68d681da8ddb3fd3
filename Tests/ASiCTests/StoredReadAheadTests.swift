@testable import ASiC
import Foundation
import TestTools
import XCTest

/// Sequential reads of a stored entry through an open file's reader: served from chunks read
/// ahead with O_DIRECT (`DirectReadAhead`), with the same bytes and the same checks as reads
/// straight from the container.
final class StoredReadAheadTests: XCTestCase {
    private var folder = ""
    private var payload: [UInt8] { Self.payload }
    // Not a whole number of chunks, and (after the mimetype entry) not chunk-aligned.
    private static let payload = (0..<(10 << 20) + 4321).map { UInt8(truncatingIfNeeded: ($0 &* 2654435761) >> 13) }
    private var path = ""
    private let piece = 128 << 10

    override func setUpWithError() throws {
        folder = try TestSupport.temporaryFolder(self)
        try TestSupport.write(payload, to: folder + "/film.mp4")  // stored: "already compressed" by name
        path = folder + "/stored.asice"
        try Container.create(at: path, files: [NewDataFile(sourcePath: folder + "/film.mp4")])
    }

    private func content(at path: String, reopen: (@Sendable (PosixFile) -> Int32)? = nil) throws -> StoredEntryContent {
        let container = try Container.open(path)
        let file = try PosixFile.openForReading(path)
        let location = try container.location(of: container.dataFile(named: "film.mp4")!.entry)
        XCTAssertEqual(location.method, ZipMethod.stored)
        let directReads = reopen.map { DirectReads(file: file, reopen: $0) } ?? DirectReads(file: file)
        return StoredEntryContent(file: file, location: location, directReads: directReads)
    }

    private func read(_ reader: EntryReader, at offset: Int, count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = try buffer.withUnsafeMutableBytes { try reader.read(into: $0, at: Int64(offset)) }
        return Array(buffer.prefix(n))
    }

    /// The kernel's readahead: pieces of 128 KiB, each pair sent in the wrong order.
    private func offsetsAsTheKernelSends(from start: Int = 0) -> [Int] {
        var offsets = Array(stride(from: start, to: payload.count, by: piece))
        for i in stride(from: 2, to: offsets.count - 1, by: 2) { offsets.swapAt(i, i + 1) }
        return offsets
    }

    private func readAll(_ reader: EntryReader, offsets: [Int]) throws {
        for offset in offsets {
            let expected = Array(payload[offset..<min(payload.count, offset + piece)])
            XCTAssertEqual(try read(reader, at: offset, count: piece), expected, "at \(offset)")
        }
    }

    private func waitForStreamsToEnd() {
        let deadline = Date().addingTimeInterval(5)
        while DirectReadAhead.activeStreams > 0 && Date() < deadline { usleep(1000) }
        XCTAssertEqual(DirectReadAhead.activeStreams, 0, "a read-ahead thread outlived its reader")
    }

    func testSequentialReadsComeFromTheReadAheadChunks() throws {
        let reader = try XCTUnwrap(try content(at: path).makeReader() as? StoredEntryReader)
        let offsets = offsetsAsTheKernelSends()
        try readAll(reader, offsets: offsets)
        // All but those before the stream starts.
        XCTAssertEqual(reader.readsFromStreams, offsets.count - StoredEntryReader.sequentialReadsBeforeStream + 1)
        XCTAssertEqual(try read(reader, at: payload.count, count: 10), [])
        reader.close()
        waitForStreamsToEnd()
    }

    func testWithoutODirectTheReaderReadsTheContainerItself() throws {
        let reader = try XCTUnwrap(try content(at: path, reopen: { _ in -1 }).makeReader() as? StoredEntryReader)
        try readAll(reader, offsets: offsetsAsTheKernelSends())
        XCTAssertEqual(reader.readsFromStreams, 0)
        XCTAssertEqual(DirectReadAhead.activeStreams, 0)
        reader.close()
    }

    func testRandomReadsStartNoStreamAndASequentialRunLaterDoes() throws {
        let reader = try XCTUnwrap(try content(at: path).makeReader() as? StoredEntryReader)
        var generator = SystemRandomNumberGenerator()
        var offset = 0
        for _ in 0..<100 {
            // Each read at least 2 MiB from the last one: never sequential.
            offset = (offset + Int.random(in: 2 << 20..<8 << 20, using: &generator)) % (payload.count - 4096)
            XCTAssertEqual(try read(reader, at: offset, count: 4096), Array(payload[offset..<offset + 4096]), "at \(offset)")
        }
        XCTAssertEqual(reader.readsFromStreams, 0)
        XCTAssertEqual(DirectReadAhead.activeStreams, 0)
        // Then sequentially from the middle (an unaligned place) to the end.
        try readAll(reader, offsets: Array(stride(from: (1 << 20) + 777, to: payload.count, by: piece)))
        XCTAssertGreaterThan(reader.readsFromStreams, 60)
        reader.close()
        waitForStreamsToEnd()
    }

    func testReadsAfterCloseStillReturnTheBytes() throws {
        let reader = try XCTUnwrap(try content(at: path).makeReader() as? StoredEntryReader)
        let offsets = offsetsAsTheKernelSends()
        try readAll(reader, offsets: Array(offsets.prefix(24)))
        let served = reader.readsFromStreams
        XCTAssertGreaterThan(served, 0)
        reader.close()
        try readAll(reader, offsets: Array(offsets.dropFirst(24)))
        XCTAssertEqual(reader.readsFromStreams, served, "a closed reader started another stream")
        waitForStreamsToEnd()
    }

    func testADamagedEntryReadThroughTheStreamFailsAtTheEnd() throws {
        var bytes = try TestSupport.read(path)
        let location = try content(at: path).location
        bytes[Int(location.dataOffset) + (5 << 20) + 17] ^= 0x40
        let damaged = try TestSupport.write(bytes, to: folder + "/damaged.asice")
        let reader = try XCTUnwrap(try content(at: damaged).makeReader() as? StoredEntryReader)
        let offsets = Array(stride(from: 0, to: payload.count, by: piece))
        var failure: Error?
        for offset in offsets {
            do { _ = try read(reader, at: offset, count: piece) } catch { failure = error; break }
        }
        XCTAssertTrue("\(failure.map { "\($0)" } ?? "no error")".contains("CRC-32 mismatch"), "\(String(describing: failure))")
        XCTAssertGreaterThan(reader.readsFromStreams, 50, "the damaged bytes did not come through the stream")
        XCTAssertThrowsError(try read(reader, at: 0, count: 10), "the damage is remembered")
        reader.close()
        waitForStreamsToEnd()
    }

    /// At most `maximumStreams` run at once; the others read for themselves and get a stream
    /// once one ends. Every stream's thread ends with its reader.
    func testStreamsAreLimitedAndEndWithTheirReaders() throws {
        let shared = try content(at: path)
        let readers = (0..<DirectReadAhead.maximumStreams + 2).map { _ in shared.makeReader() as! StoredEntryReader }
        let offsets = offsetsAsTheKernelSends()
        for offset in offsets.prefix(4) {
            for reader in readers {
                XCTAssertEqual(try read(reader, at: offset, count: piece), Array(payload[offset..<offset + piece]))
            }
        }
        XCTAssertEqual(DirectReadAhead.activeStreams, DirectReadAhead.maximumStreams)
        XCTAssertEqual(readers.filter { $0.readsFromStreams > 0 }.count, DirectReadAhead.maximumStreams)
        readers[0].close()
        waitUntil { DirectReadAhead.activeStreams < DirectReadAhead.maximumStreams }
        for offset in offsets.dropFirst(4) {
            for reader in readers.dropFirst() {
                XCTAssertEqual(try read(reader, at: offset, count: piece), Array(payload[offset..<min(payload.count, offset + piece)]))
            }
        }
        let waiting = readers[DirectReadAhead.maximumStreams]
        XCTAssertGreaterThan(waiting.readsFromStreams, 0, "a reader left without a stream got one when a stream ended")
        XCTAssertEqual(readers.last!.readsFromStreams, 0)
        for reader in readers { reader.close() }
        waitForStreamsToEnd()
    }

    private func waitUntil(_ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(5)
        while !condition() && Date() < deadline { usleep(1000) }
        XCTAssertTrue(condition())
    }
}

@testable import ASiC
import TestTools
import XCTest

/// Damaged data never comes out as if it were fine, on any read path: the streaming read
/// (extract, digests) and the random access the mount uses, whatever order the reads come in.
final class DamagedDataTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = try TestSupport.temporaryFolder(self)
    }

    private func damaged(_ damage: DamagedContainer.Damage) throws -> (Container, Int) {
        let path = folder + "/\(damage.rawValue).asice"
        let first = try DamagedContainer.make(at: path, damage: damage)
        return (try Container.open(path), first)
    }

    private func assertDamaged(_ error: Error, _ file: StaticString = #filePath, line: UInt = #line) {
        guard case ContainerError.dataMismatch(let name, _)? = error as? ContainerError else {
            return XCTFail("expected a data mismatch, got \(error)", file: file, line: line)
        }
        XCTAssertEqual(name, "big.txt", file: file, line: line)
    }

    /// A stream that fails part-way through a large entry, while the helper thread still holds
    /// the previous buffer, is an error (it crashed with SIGILL, an escaped closure).
    func testAStreamingReadOfACorruptStreamThrows() throws {
        let (container, _) = try damaged(.corruptStream)
        for _ in 0..<5 {
            var delivered = 0
            // A slow consumer (like extract writing to disk) keeps the helper busy when inflating fails.
            XCTAssertThrowsError(try container.read("big.txt") { delivered += $0.count; usleep(3000) }) { assertDamaged($0) }
            XCTAssertLessThan(delivered, 6 << 20)
        }
    }

    func testAStreamingReadOfWrongBytesThrows() throws {
        let (container, _) = try damaged(.wrongBytes)
        XCTAssertThrowsError(try container.read("big.txt") { _ in }) { assertDamaged($0) }
        XCTAssertThrowsError(try container.sha256(of: "big.txt")) { assertDamaged($0) }
    }

    /// Reads in 128 KiB pieces, in the order the kernel's readahead may send them: the next
    /// piece sometimes before the current one.
    private func readOutOfOrder(_ content: EntryContent) throws -> Int {
        let piece = 128 << 10
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: piece, alignment: 16)
        defer { buffer.deallocate() }
        var offsets: [Int64] = []
        var offset: Int64 = 0
        while offset < content.size {
            offsets.append(offset)
            offset += Int64(piece)
        }
        for index in stride(from: 0, to: offsets.count - 1, by: 2) { offsets.swapAt(index, index + 1) }
        var total = 0
        for offset in offsets { total += try content.read(into: buffer, at: offset) }
        return total
    }

    /// The random-access path checks the CRC-32 once the whole entry has been read, even when
    /// no single decoder started at byte 0 and went to the end (it served wrong bytes).
    func testRandomAccessReadsOfWrongBytesFailAtTheEnd() throws {
        let (container, _) = try damaged(.wrongBytes)
        let content = try container.content(of: "big.txt")
        XCTAssertThrowsError(try readOutOfOrder(content)) { assertDamaged($0) }
        // Remembered: any later read of the entry fails too, from any offset.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        for offset: Int64 in [0, 1 << 20, content.size - 4096] {
            XCTAssertThrowsError(try content.read(into: buffer, at: offset)) { assertDamaged($0) }
        }
    }

    func testRandomAccessReadsPastAStreamCorruptionFail() throws {
        let (container, first) = try damaged(.corruptStream)
        let content = try container.content(of: "big.txt")
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        // Before the damage the bytes are readable; at it and past it they never are.
        XCTAssertEqual(try content.read(into: buffer, at: 0), 4096)
        for offset in [Int64(first) + 8192, Int64(first) + (1 << 20), content.size - 4096, Int64(first) + 8192] {
            XCTAssertThrowsError(try content.read(into: buffer, at: offset), "offset \(offset)") { assertDamaged($0) }
        }
        XCTAssertThrowsError(try readOutOfOrder(content)) { assertDamaged($0) }
    }

    /// A stored entry read in pieces, in any order, is checked once every byte has been read.
    func testRandomAccessReadsOfAStoredEntryCheckTheCRC() throws {
        let (container, _) = try damaged(.wrongStoredBytes)
        XCTAssertEqual(container.dataFile(named: "big.txt")?.isCompressed, false)
        let content = try container.content(of: "big.txt")
        XCTAssertThrowsError(try readOutOfOrder(content)) { assertDamaged($0) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        XCTAssertThrowsError(try content.read(into: buffer, at: 0)) { assertDamaged($0) }
    }

    /// An empty entry is all read by its first read: a wrong CRC fails it (deflated or stored).
    func testAnEmptyEntryWithAWrongCRCFailsOnRandomAccess() throws {
        let path = folder + "/empty.asice"
        let made = try Shell.python("""
            import sys, zipfile, struct
            path = sys.argv[1]
            with zipfile.ZipFile(path, 'w') as z:
                z.writestr(zipfile.ZipInfo('mimetype'), 'application/vnd.etsi.asic-e+zip')
                z.writestr('empty.txt', b'', compress_type=zipfile.ZIP_DEFLATED)
                z.writestr('empty.bin', b'', compress_type=zipfile.ZIP_STORED)
                z.writestr('META-INF/manifest.xml', '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest '
                    'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry '
                    'manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"/>'
                    '<manifest:file-entry manifest:full-path="empty.txt" manifest:media-type="text/plain"/>'
                    '<manifest:file-entry manifest:full-path="empty.bin" manifest:media-type="text/plain"/>'
                    '</manifest:manifest>')
            blob = bytearray(open(path, 'rb').read())
            z = zipfile.ZipFile(path)
            for name in ('empty.txt', 'empty.bin'):
                info = z.getinfo(name)
                blob[info.header_offset + 14:info.header_offset + 18] = struct.pack('<I', 0x12345678)
            # The central directory records: patch the CRC of both.
            at = blob.find(b'PK\\x01\\x02')
            while at >= 0:
                n = struct.unpack('<H', blob[at + 28:at + 30])[0]
                if blob[at + 46:at + 46 + n] in (b'empty.txt', b'empty.bin'):
                    blob[at + 16:at + 20] = struct.pack('<I', 0x12345678)
                at = blob.find(b'PK\\x01\\x02', at + 4)
            open(path, 'wb').write(blob)
            """, [path])
        XCTAssertEqual(made.status, 0, made.stderr)
        let container = try Container.open(path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 16)
        defer { buffer.deallocate() }
        for name in ["empty.txt", "empty.bin"] {
            XCTAssertThrowsError(try container.read(name) { _ in }, name)
            XCTAssertThrowsError(try container.content(of: name).read(into: buffer, at: 0), name) { error in
                guard case ContainerError.dataMismatch? = error as? ContainerError else { return XCTFail("\(error)") }
            }
        }
    }

    func testUndamagedEntriesReadInAnyOrderAreFine() throws {
        let data = textLikeBytes(count: 5 << 20)
        try TestSupport.write(data, to: folder + "/a.txt")
        let path = folder + "/fine.asice"
        try Container.create(at: path, files: [NewDataFile(sourcePath: folder + "/a.txt")])
        let intact = folder + "/intact.asice"
        try DamagedContainer.make(at: intact, damage: .none)
        for (container, name, size) in [(try Container.open(path), "a.txt", data.count),
                                        (try Container.open(intact), "big.txt", 6 << 20)] {
            let content = try container.content(of: name)
            XCTAssertEqual(try readOutOfOrder(content), size)
            XCTAssertEqual(try readOutOfOrder(content), size, "a second pass is fine too")
        }
    }
}

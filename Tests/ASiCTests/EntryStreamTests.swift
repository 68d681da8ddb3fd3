@testable import ASiC
import Foundation
import TestTools
import XCTest

/// The streaming read of a large deflated entry, which two threads share (each inflates and
/// delivers every other chunk): `body` sees every byte once, in order, one call at a time, and
/// any failure (a damaged stream, a wrong size, `body` itself) ends the read with that error,
/// without a hang and without calling `body` afterwards.
final class EntryStreamTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = try TestSupport.temporaryFolder(self)
    }

    /// Text, incompressible runs, long zero runs (one input buffer for many output chunks) and
    /// repeats, in an odd total size, so that chunk boundaries fall everywhere.
    private func variedBytes() -> [UInt8] {
        var bytes = textLikeBytes(count: 3 << 20, seed: 9)
        var state: UInt64 = 77
        for _ in 0..<(2 << 20) {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            bytes.append(UInt8(truncatingIfNeeded: state >> 56))
        }
        bytes += [UInt8](repeating: 0, count: 3 << 20)
        bytes += textLikeBytes(count: 2 << 20 + 12_345, seed: 10)
        bytes += bytes[100_000..<1_500_000]
        bytes += [UInt8](repeating: 0x41, count: 777)
        return bytes
    }

    /// A container with `bytes` as `name`, deflated by Python's zlib; `declaredSize` and
    /// `declaredCompressed` override the sizes in both headers (to damage it).
    private func pythonContainer(_ bytes: [UInt8], name: String = "v.bin", declaredSize: Int? = nil,
                                 declaredCompressed: Int? = nil) throws -> String {
        let source = try TestSupport.write(bytes, to: folder + "/source-\(UUID().uuidString.prefix(6))")
        let path = folder + "/py-\(UUID().uuidString.prefix(6)).asice"
        let result = try Shell.python("""
            import sys, zipfile, struct
            path, source, name, size, csize = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
            manifest = ('<?xml version="1.0" encoding="UTF-8"?><manifest:manifest '
                'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry '
                'manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"/>'
                '<manifest:file-entry manifest:full-path="%s" manifest:media-type="application/octet-stream"/>'
                '</manifest:manifest>') % name
            with zipfile.ZipFile(path, 'w') as z:
                z.writestr(zipfile.ZipInfo('mimetype'), 'application/vnd.etsi.asic-e+zip')
                z.writestr(name, open(source, 'rb').read(), compress_type=zipfile.ZIP_DEFLATED, compresslevel=6)
                z.writestr('META-INF/manifest.xml', manifest)
            info = zipfile.ZipFile(path).getinfo(name)
            blob = bytearray(open(path, 'rb').read())
            central = blob.find(b'PK\\x01\\x02' + blob[info.header_offset + 4:info.header_offset + 6])
            while blob[central + 46:central + 46 + len(name)] != name.encode():
                central = blob.find(b'PK\\x01\\x02', central + 4)
            if size >= 0:
                struct.pack_into('<I', blob, info.header_offset + 22, size)
                struct.pack_into('<I', blob, central + 24, size)
            if csize >= 0:
                struct.pack_into('<I', blob, info.header_offset + 18, csize)
                struct.pack_into('<I', blob, central + 20, csize)
            open(path, 'wb').write(blob)
            """, [path, source, name, String(declaredSize ?? -1), String(declaredCompressed ?? -1)])
        XCTAssertEqual(result.status, 0, result.stderr)
        return path
    }

    private func sha256sum(_ path: String) throws -> String {
        String(try Shell.run("sha256sum", [path]).stdout.prefix(64))
    }

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// Runs `read` on another thread; fails instead of hanging when it does not return.
    private func withinAMinute<T>(_ read: @escaping @Sendable () throws -> T) throws -> T {
        nonisolated(unsafe) var outcome: Result<T, Error>?
        let done = DispatchSemaphore(value: 0)
        Thread { outcome = Result { try read() }; done.signal() }.start()
        guard done.wait(timeout: .now() + 60) == .success else {
            XCTFail("the read hangs")
            throw CancellationError()
        }
        return try outcome!.get()
    }

    /// Everything `body` saw, checking that no two calls overlap and no call comes after the
    /// read returned.
    private final class Recorder: @unchecked Sendable {
        private let inside = NSLock()
        private var finished = false
        var bytes: [UInt8] = []
        var calls = 0
        var overlaps = 0
        var lateCalls = 0

        func record(_ piece: UnsafeRawBufferPointer, slow: Bool = false) {
            guard inside.try() else { overlaps += 1; return }
            defer { inside.unlock() }
            if finished { lateCalls += 1 }
            XCTAssertGreaterThan(piece.count, 0)
            XCTAssertLessThanOrEqual(piece.count, EntryStream.chunkSize)
            bytes.append(contentsOf: piece)
            calls += 1
            if slow { usleep(500) }
        }

        func finish() { inside.withLock { finished = true } }
    }

    func testALargeDeflatedEntryIsDeliveredWholeAndInOrder() throws {
        let original = variedBytes()
        XCTAssertGreaterThan(original.count, 4 << 20)  // the two-thread path
        try TestSupport.write(original, to: folder + "/v.bin")
        let ours = folder + "/ours.asice"
        try Container.create(at: ours, files: [NewDataFile(sourcePath: folder + "/v.bin")])
        for path in [ours, try pythonContainer(original)] {
            let container = try Container.open(path)
            XCTAssertEqual(container.dataFile(named: "v.bin")?.isCompressed, true)
            for slow in [false, true] {
                let recorder = Recorder()
                try withinAMinute { try container.read("v.bin") { recorder.record($0, slow: slow) } }
                recorder.finish()
                XCTAssertEqual(recorder.overlaps, 0)
                XCTAssertEqual(recorder.bytes.count, original.count)
                XCTAssertTrue(recorder.bytes == original, "\(path), slow: \(slow): the bytes differ")
            }
            XCTAssertEqual(hex(try container.sha256(of: "v.bin")), try sha256sum(folder + "/v.bin"))
        }
    }

    /// The error a damaged entry gives read on one thread, the way a small entry is read.
    private func oneThreadError(_ container: Container, _ name: String) throws -> String {
        let location = try container.location(of: XCTUnwrap(container.dataFile(named: name)).entry)
        let source = try InflateSource(location, in: container.file)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: EntryStream.chunkSize, alignment: 16)
        defer { output.deallocate() }
        do {
            while !source.ended { _ = try source.fill(output) }
        } catch {
            return "\(error)"
        }
        return "no error"
    }

    func testACorruptStreamInTheMiddleOfALargeEntryFailsOnce() throws {
        let path = folder + "/corrupt.asice"
        let first = try DamagedContainer.make(at: path, damage: .corruptStream, size: 13 << 20)
        let intact = folder + "/intact.asice"
        try DamagedContainer.make(at: intact, damage: .none, size: 13 << 20)
        var original: [UInt8] = []
        try Container.open(intact).read("big.txt") { original.append(contentsOf: $0) }
        let container = try Container.open(path)
        let expected = try oneThreadError(container, "big.txt")
        XCTAssertTrue(expected.contains("deflate stream is corrupt"), expected)
        for slow in [false, true, false] {
            let recorder = Recorder()
            var message = ""
            XCTAssertThrowsError(try withinAMinute { try container.read("big.txt") { recorder.record($0, slow: slow) } }) {
                guard case ContainerError.dataMismatch("big.txt", _)? = $0 as? ContainerError else {
                    return XCTFail("expected a data mismatch, got \($0)")
                }
                message = "\($0)"
            }
            recorder.finish()
            XCTAssertEqual(message, expected)
            XCTAssertFalse(message.contains("\n"))
            XCTAssertEqual(recorder.overlaps, 0)
            usleep(20_000)
            XCTAssertEqual(recorder.lateCalls, 0)
            // Only good bytes, in order, and none from the damage on.
            XCTAssertLessThanOrEqual(recorder.bytes.count, first)
            XCTAssertTrue(recorder.bytes[...] == original[0..<recorder.bytes.count])
        }
        XCTAssertThrowsError(try container.sha256(of: "big.txt"))
    }

    private struct Stop: Error, Equatable {
        let at: Int
    }

    func testAnErrorOfBodyEndsTheRead() throws {
        let original = variedBytes()
        try TestSupport.write(original, to: folder + "/v.bin")
        let container = try Container.open(try pythonContainer(original))
        let chunks = (original.count + EntryStream.chunkSize - 1) / EntryStream.chunkSize
        for stopAt in [0, 1, 2, 7, chunks / 2, chunks - 2, chunks - 1] {
            nonisolated(unsafe) var calls = 0
            nonisolated(unsafe) var afterStop = 0
            XCTAssertThrowsError(try withinAMinute {
                try container.read("v.bin") { _ in
                    if calls > stopAt { afterStop += 1 }
                    calls += 1
                    if calls - 1 == stopAt { throw Stop(at: stopAt) }
                }
            }) { XCTAssertEqual($0 as? Stop, Stop(at: stopAt), "\($0)") }
            XCTAssertEqual(calls, stopAt + 1, "stop at \(stopAt)")
            XCTAssertEqual(afterStop, 0)
        }
        // The container still reads fine afterwards.
        XCTAssertEqual(hex(try container.sha256(of: "v.bin")), try sha256sum(folder + "/v.bin"))
    }

    func testALargeEntryThatInflatesToMoreThanDeclaredIsRefused() throws {
        let original = variedBytes()
        let container = try Container.open(try pythonContainer(original, declaredSize: 6 << 20))
        nonisolated(unsafe) var seen = 0
        XCTAssertThrowsError(try withinAMinute { try container.read("v.bin") { seen += $0.count } }) {
            XCTAssertTrue("\($0)".contains("zip bomb"), "\($0)")
        }
        XCTAssertLessThanOrEqual(seen, 6 << 20)
    }

    func testALargeEntryWhoseCompressedDataEndsEarlyIsRefused() throws {
        let original = variedBytes()
        let whole = try Container.open(try pythonContainer(original))
        let compressed = try XCTUnwrap(whole.dataFile(named: "v.bin")).entry.compressedSize
        let container = try Container.open(try pythonContainer(original, declaredCompressed: Int(compressed) / 2))
        XCTAssertThrowsError(try withinAMinute { try container.read("v.bin") { _ in } }) {
            XCTAssertTrue("\($0)".contains("the compressed data ends early"), "\($0)")
        }
    }

    func testALargeEntryShorterThanDeclaredIsRefused() throws {
        let original = variedBytes()
        let container = try Container.open(try pythonContainer(original, declaredSize: original.count + 1))
        nonisolated(unsafe) var seen = 0
        XCTAssertThrowsError(try withinAMinute { try container.read("v.bin") { seen += $0.count } }) {
            XCTAssertTrue("\($0)".contains("not the declared"), "\($0)")
        }
        XCTAssertEqual(seen, original.count)
    }
}

@testable import ASiC
import Crypto
import CZlib
import TestTools
import XCTest

/// The ISA-L codec layer against zlib and the peer tools: raw-deflate round trips both ways,
/// saved decoder states that resume to the same bytes, CRC-32 (and zlib's combine) equal to
/// zlib's, and readers that serve out-of-order requests from their window without restarts.
final class CodecTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = try TestSupport.temporaryFolder(self)
    }

    // MARK: - Helpers

    private func isalDeflate(_ bytes: [UInt8], level: DeflateLevel) throws -> [UInt8] {
        try bytes.withUnsafeBytes { try Deflater(level: level).compress($0) }
    }

    /// Our inflater, fed in `inputPiece`-byte pieces and emptied in `outputPiece`-byte pieces.
    private func isalInflate(_ compressed: [UInt8], inputPiece: Int = 4096, outputPiece: Int = 10_000) throws -> [UInt8] {
        let inflater = try Inflater()
        var result: [UInt8] = []
        var offset = 0
        var output = [UInt8](repeating: 0, count: outputPiece)
        try compressed.withUnsafeBytes { input in
            while !inflater.isFinished {
                if inflater.inputLeft == 0 {
                    let n = min(inputPiece, compressed.count - offset)
                    if n == 0 && offset == compressed.count {
                        // Drain what it holds; no progress then means a truncated stream.
                        let produced = try output.withUnsafeMutableBytes { try inflater.inflate(into: $0) }
                        result += output[0..<produced]
                        if produced == 0 && !inflater.isFinished { throw InflateError(reason: "ends early") }
                        continue
                    }
                    inflater.setInput(UnsafeRawBufferPointer(rebasing: input[offset..<offset + n]))
                    offset += n
                }
                let produced = try output.withUnsafeMutableBytes { try inflater.inflate(into: $0) }
                result += output[0..<produced]
            }
        }
        return result
    }

    private func zlibDeflate(_ bytes: [UInt8], level: Int32) -> [UInt8] {
        var stream = z_stream()
        XCTAssertEqual(deflateInit2_(&stream, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY,
                                     ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)), Z_OK)
        var out = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 64)
        var input = bytes
        let produced = input.withUnsafeMutableBufferPointer { i in
            out.withUnsafeMutableBufferPointer { o -> Int in
                stream.next_in = i.baseAddress
                stream.avail_in = uInt(i.count)
                stream.next_out = o.baseAddress
                stream.avail_out = uInt(o.count)
                XCTAssertEqual(deflate(&stream, Z_FINISH), Z_STREAM_END)
                return o.count - Int(stream.avail_out)
            }
        }
        deflateEnd(&stream)
        return Array(out[0..<produced])
    }

    private func zlibInflate(_ compressed: [UInt8], size: Int) -> [UInt8]? {
        var stream = z_stream()
        XCTAssertEqual(inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)), Z_OK)
        var out = [UInt8](repeating: 0, count: size + 1)
        var input = compressed
        let (rc, produced) = input.withUnsafeMutableBufferPointer { i in
            out.withUnsafeMutableBufferPointer { o -> (Int32, Int) in
                stream.next_in = i.baseAddress
                stream.avail_in = uInt(i.count)
                stream.next_out = o.baseAddress
                stream.avail_out = uInt(o.count)
                let rc = inflate(&stream, Z_FINISH)
                return (rc, o.count - Int(stream.avail_out))
            }
        }
        inflateEnd(&stream)
        return rc == Z_STREAM_END ? Array(out[0..<produced]) : nil
    }

    private var samples: [[UInt8]] {
        var random = [UInt8](repeating: 0, count: 300_000)
        var generator = SystemRandomNumberGenerator()
        for index in random.indices { random[index] = UInt8.random(in: 0...255, using: &generator) }
        return [[], [7], Array("hello, hello, hello".utf8), textLikeBytes(count: 3 << 20, seed: 7),
                random, [UInt8](repeating: 0, count: 1 << 20)]
    }

    // MARK: - Round trips

    func testISALDeflateInflatesWithZlibAndBack() throws {
        for sample in samples {
            for level in [DeflateLevel.fastest, .standard, DeflateLevel(zlib: 9)] {
                let ours = try isalDeflate(sample, level: level)
                XCTAssertEqual(zlibInflate(ours, size: sample.count), sample, "zlib reads ISA-L level \(level.isal), \(sample.count) bytes")
                XCTAssertEqual(try isalInflate(ours), sample, "ISA-L reads itself")
            }
            for level: Int32 in [1, 6, 9] {
                let theirs = zlibDeflate(sample, level: level)
                XCTAssertEqual(try isalInflate(theirs), sample, "ISA-L reads zlib -\(level), \(sample.count) bytes")
                if sample.count < 100_000 {
                    XCTAssertEqual(try isalInflate(theirs, inputPiece: 1, outputPiece: 1), sample, "byte by byte")
                }
            }
        }
    }

    /// Text like fsbench's W4 file: words of a random 700-word vocabulary, 13 to a line.
    private func vocabularyText(count: Int) -> [UInt8] {
        var state: UInt64 = 99
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 33
        }
        let lengths = [2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9, 10, 12]
        let vocabulary = (0..<700).map { _ in
            (0..<lengths[Int(next() % 13)]).map { _ in UInt8(0x61 + next() % 26) }
        }
        var out: [UInt8] = []
        out.reserveCapacity(count + 16)
        var words = 0
        while out.count < count {
            out += vocabulary[Int(next() % 700)]
            words += 1
            out.append(words % 13 == 0 ? 0x0A : 0x20)
        }
        return Array(out.prefix(count))
    }

    /// The level chosen for zlib's 6 (`DeflateLevel.standard`) keeps the size within 3 % of
    /// zlib -6 on text like fsbench's W4 file (`DeflateLevel` has the full measurement).
    func testTheStandardLevelStaysWithinThreePercentOfZlib6() throws {
        let text = vocabularyText(count: 8 << 20)
        let ours = try isalDeflate(text, level: .standard).count
        let zlib6 = zlibDeflate(text, level: 6).count
        XCTAssertLessThanOrEqual(Double(ours), Double(zlib6) * 1.03, "ISA-L \(ours) bytes vs zlib -6 \(zlib6)")
    }

    func testTruncatedAndCorruptStreamsAreErrors() throws {
        let text = textLikeBytes(count: 1 << 20, seed: 9)
        let compressed = zlibDeflate(text, level: 6)
        XCTAssertThrowsError(try isalInflate(Array(compressed.prefix(compressed.count / 2))))
        var corrupt = compressed
        for index in stride(from: 1000, to: 1064, by: 1) { corrupt[index] = 0xFF }
        XCTAssertThrowsError(try isalInflate(corrupt))
        // A back-reference before the start of the stream (zlib made it with a preset dictionary).
        XCTAssertThrowsError(try isalInflate([27, 120, 14, 0]))
    }

    /// Containers we write are read by Python's zipfile and Info-ZIP's unzip (both zlib); the
    /// large ones are deflated on two threads in pieces (sizes around the 1 MiB piece and the
    /// 2 MiB step).
    func testContainersWeDeflateAreReadByZipfileAndUnzip() throws {
        var files: [NewDataFile] = []
        for (index, size) in [0, 1, 1000, 70_000, 5 << 20, 4 << 20, (7 << 20) + 1, (6 << 20) - 1].enumerated() {
            let path = folder + "/f\(index).txt"
            try TestSupport.write(textLikeBytes(count: size, seed: UInt64(index)), to: path)
            files.append(NewDataFile(sourcePath: path))
        }
        let container = folder + "/made.asice"
        try Container.create(at: container, files: files)
        let checked = try Shell.python("""
            import sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            assert z.testzip() is None
            for i in range(8):
                name = 'f%d.txt' % i
                data = z.read(name)
                assert data == open(sys.argv[2] + '/' + name, 'rb').read(), name
                if len(data) > 1000: assert z.getinfo(name).compress_type == zipfile.ZIP_DEFLATED, name
            print('ok')
            """, [container, folder])
        XCTAssertEqual(checked.status, 0, checked.stderr)
        let unzip = try Shell.run("/usr/bin/unzip", ["-tq", container])
        XCTAssertEqual(unzip.status, 0, unzip.stdout + unzip.stderr)
    }

    // MARK: - Saved states

    /// A decoder saved at any point and resumed (from the input position it had reached) gives
    /// the same output as the one that went on.
    func testASavedStateResumesToTheSameBytes() throws {
        let text = textLikeBytes(count: 2 << 20, seed: 11)
        let compressed = zlibDeflate(text, level: 6)
        let inflater = try Inflater()
        var output = [UInt8](repeating: 0, count: 50_000)
        var produced = 0
        var given = 0
        var saves = 0
        try compressed.withUnsafeBytes { input in
            while !inflater.isFinished {
                if inflater.inputLeft == 0 {
                    let n = min(9_999, compressed.count - given)
                    inflater.setInput(UnsafeRawBufferPointer(rebasing: input[given..<given + n]))
                    given += n
                }
                let n = try output.withUnsafeMutableBytes { try inflater.inflate(into: $0) }
                XCTAssertEqual(Array(output[0..<n]), Array(text[produced..<produced + n]))
                produced += n
                guard saves < 12, produced < text.count else { continue }
                // Save, resume elsewhere, and decode the rest with the copy.
                saves += 1
                var state: [UInt8] = []
                inflater.savedState(into: &state)
                XCTAssertLessThanOrEqual(state.count, Inflater.maximumSavedSize)
                let consumed = given - inflater.inputLeft
                let copy = try state.withUnsafeBytes { try Inflater(resuming: $0) }
                var rest: [UInt8] = []
                var position = consumed
                var piece = [UInt8](repeating: 0, count: 70_000)
                while !copy.isFinished {
                    if copy.inputLeft == 0 {
                        let n = min(30_000, compressed.count - position)
                        copy.setInput(UnsafeRawBufferPointer(rebasing: input[position..<position + n]))
                        position += n
                    }
                    let m = try piece.withUnsafeMutableBytes { try copy.inflate(into: $0) }
                    rest += piece[0..<m]
                }
                XCTAssertEqual(rest, Array(text[produced...]), "resumed at output \(produced), input \(consumed)")
            }
        }
        XCTAssertEqual(produced, text.count)
        XCTAssertGreaterThan(saves, 5)
        var bogus = [UInt8](repeating: 1, count: 100)
        XCTAssertThrowsError(try bogus.withUnsafeMutableBytes { try Inflater(resuming: UnsafeRawBufferPointer($0)) })
    }

    /// Reads that restart from the seek index's checkpoints (saved states) give the same bytes
    /// as a front-to-back read.
    func testCheckpointRestartsGiveTheSameBytes() throws {
        let text = textLikeBytes(count: 12 << 20, seed: 5)
        try TestSupport.write(text, to: folder + "/big.txt")
        let path = folder + "/cp.asice"
        try Container.create(at: path, files: [NewDataFile(sourcePath: folder + "/big.txt")])
        let content = try XCTUnwrap(try Container.open(path).content(of: "big.txt") as? DeflatedEntryContent)
        var buffer = [UInt8](repeating: 0, count: 5000)
        _ = try buffer.withUnsafeMutableBytes { try content.read(into: $0, at: Int64(text.count - 5000)) }
        XCTAssertGreaterThan(content.checkpointCount, 10)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<60 {
            let offset = Int.random(in: 0..<text.count - 5000, using: &generator)
            let n = try buffer.withUnsafeMutableBytes { try content.read(into: $0, at: Int64(offset)) }
            XCTAssertEqual(Array(buffer[0..<n]), Array(text[offset..<offset + 5000]), "at \(offset)")
        }
        XCTAssertGreaterThan(content.restarts, 10, "reads restarted from saved states")
    }

    /// An entry that inflates past 4 GiB (ISA-L's 32-bit total_out would wrap there and then
    /// refuse back-references) inflates to the end.
    func testAStreamPast4GiBInflates() throws {
        let block = textLikeBytes(count: 30_000, seed: 1)
        let total: Int64 = (4 << 30) + (64 << 20)
        let deflater = try Deflater(level: .fastest)
        let inflater = try Inflater()
        var input = [UInt8](repeating: 0, count: 4 << 20)
        for start in stride(from: 0, to: input.count, by: block.count) {
            let n = min(block.count, input.count - start)
            input.replaceSubrange(start..<start + n, with: block[0..<n])
        }
        // Whole multiples of the block, so every piece continues the same pattern.
        let piece = (input.count / block.count) * block.count
        var compressed = [UInt8](repeating: 0, count: 1 << 20)
        var output = [UInt8](repeating: 0, count: 1 << 20)
        var fed: Int64 = 0
        var inflated: Int64 = 0
        var crcIn: UInt32 = 0, crcOut: UInt32 = 0
        var ended = false
        while !ended {
            let n = Int(min(Int64(piece), total - fed))
            let last = fed + Int64(n) == total
            var taken = 0
            repeat {
                let step = try input.withUnsafeBytes { i in
                    try compressed.withUnsafeMutableBytes { o in
                        try deflater.deflate(UnsafeRawBufferPointer(rebasing: i[taken..<n]), last: last, into: o)
                    }
                }
                taken += step.consumed
                ended = step.ended
                // Inflate what came out, all of it.
                try compressed.withUnsafeBytes { c in
                    inflater.setInput(UnsafeRawBufferPointer(rebasing: c[0..<step.produced]))
                    repeat {
                        let m = try output.withUnsafeMutableBytes { try inflater.inflate(into: $0) }
                        crcOut = output.withUnsafeBytes { CRC32.update(crcOut, UnsafeRawBufferPointer(rebasing: $0[0..<m])) }
                        inflated += Int64(m)
                        if m < output.count { break }
                    } while true
                }
                if taken == n && (!last || ended) { break }
            } while true
            crcIn = input.withUnsafeBytes { CRC32.update(crcIn, UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            fed += Int64(n)
        }
        XCTAssertTrue(inflater.isFinished)
        XCTAssertEqual(inflated, total)
        XCTAssertEqual(crcOut, crcIn)
    }

    // MARK: - Two-thread deflate

    /// More pieces than slots (so every slot is used again), the last one short, written after
    /// an offset: one raw-deflate stream of the input, with the input's CRC-32 and SHA-256.
    func testTheTwoThreadDeflateWritesOneStreamOfItsInput() throws {
        let text = textLikeBytes(count: (9 << 20) + 12_345, seed: 31)
        try TestSupport.write(text, to: folder + "/in.txt")
        let source = try PosixFile.openForReading(folder + "/in.txt")
        let output = try PosixFile.createExclusive(folder + "/out.bin")
        let hasher = Hasher(.sha256)
        let helper = HelperThread()
        defer { helper.stop() }
        var reported: [Int64] = []
        let (crc, compressed) = try ParallelDeflate(source: source, size: Int64(text.count), level: .standard,
                                                    into: output, at: 100, hasher: hasher)
            .run(helper: helper) { reported.append($0) }
        let stream = try output.read(count: Int(compressed), at: 100)
        XCTAssertEqual(stream.count, Int(compressed))
        XCTAssertEqual(try output.size(), 100 + compressed, "nothing written past the stream")
        XCTAssertEqual(zlibInflate(stream, size: text.count), text, "zlib reads the pieces as one stream")
        XCTAssertEqual(crc, CRC32.of(text))
        XCTAssertEqual(hasher.finish(), Digest.hash(text))
        XCTAssertFalse(reported.isEmpty)
        XCTAssertEqual(reported, reported.sorted(), "progress only grows")
        XCTAssertLessThanOrEqual(reported.last ?? 0, Int64(text.count))
    }

    /// A piece that cannot be read (here: the source is shorter than the size given) ends the
    /// deflate on both threads with that error instead of leaving one waiting.
    func testAPieceThatCannotBeReadEndsTheTwoThreadDeflateWithItsError() throws {
        let text = textLikeBytes(count: 3 << 20, seed: 32)
        try TestSupport.write(text, to: folder + "/short.txt")
        let source = try PosixFile.openForReading(folder + "/short.txt")
        let output = try PosixFile.createExclusive(folder + "/out.bin")
        let helper = HelperThread()
        defer { helper.stop() }
        XCTAssertThrowsError(try ParallelDeflate(source: source, size: 12 << 20, level: .standard,
                                                 into: output, at: 0, hasher: nil).run(helper: helper) { _ in }) { error in
            XCTAssertTrue("\(error)".contains("ends early"), "\(error)")
        }
    }

    // MARK: - CRC-32

    func testCRC32EqualsZlibsAndCombines() throws {
        for sample in samples + [Array(repeating: 0xA5, count: 13)] {
            let zlibCRC = sample.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
            XCTAssertEqual(CRC32.of(sample), zlibCRC, "\(sample.count) bytes")
            XCTAssertEqual(CRC32.of(sample), crc32Of(sample))
            guard sample.count > 2 else { continue }
            for cut in [1, sample.count / 3, sample.count - 1] {
                let a = CRC32.of(Array(sample[..<cut])), b = CRC32.of(Array(sample[cut...]))
                XCTAssertEqual(CRC32.combine(a, b, secondLength: Int64(sample.count - cut)), zlibCRC, "cut at \(cut)")
                // Continuing a CRC over the second piece is the same as combining.
                XCTAssertEqual(sample.withUnsafeBytes { CRC32.update(a, UnsafeRawBufferPointer(rebasing: $0[cut...])) }, zlibCRC)
            }
        }
        XCTAssertEqual(CRC32.of(Array("123456789".utf8)), 0xCBF4_3926, "the standard check value")
    }

    // MARK: - Readers

    private func makeContainer(size: Int, seed: UInt64 = 21) throws -> (Container, [UInt8]) {
        let text = textLikeBytes(count: size, seed: seed)
        try TestSupport.write(text, to: folder + "/r.txt")
        let path = folder + "/r-\(size).asice"
        try Container.create(at: path, files: [NewDataFile(sourcePath: folder + "/r.txt")])
        return (try Container.open(path), text)
    }

    /// Readahead requests that arrive out of order (the next before the current, a little
    /// ahead) come from the reader's window: no decoder restarts, the right bytes.
    func testOutOfOrderReadsAreServedFromTheWindowWithoutRestarts() throws {
        for size in [3 << 20, 9 << 20 + 123] {  // one decoded inline, one on the helper thread
            let (container, text) = try makeContainer(size: size)
            let content = try XCTUnwrap(try container.content(of: "r.txt") as? DeflatedEntryContent)
            let reader = try XCTUnwrap(content.makeReader() as? DeflatedEntryReader)
            let piece = 128 << 10
            var offsets: [Int] = Array(stride(from: 0, to: size, by: piece))
            // Pairs swapped (the very first request too), and every fifth request three pieces early.
            for index in stride(from: 0, to: offsets.count - 1, by: 2) { offsets.swapAt(index, index + 1) }
            for index in stride(from: 5, to: offsets.count - 3, by: 5) { offsets.swapAt(index, index + 3) }
            var buffer = [UInt8](repeating: 0, count: piece)
            for offset in offsets {
                let n = try buffer.withUnsafeMutableBytes { try reader.read(into: $0, at: Int64(offset)) }
                XCTAssertEqual(n, min(piece, size - offset))
                XCTAssertTrue(buffer[0..<n].elementsEqual(text[offset..<offset + n]), "size \(size) at \(offset)")
            }
            XCTAssertEqual(content.restarts, 0, "no checkpoint restarts for size \(size)")
            XCTAssertEqual(reader.sequentialReads, offsets.count)
            XCTAssertTrue(content.integrity.isVerified, "the CRC was checked")
            // The helper's decoder takes its input from O_DIRECT read-ahead; the inline one reads it.
            if size >= DeflatedEntryReader.aheadThreshold {
                XCTAssertGreaterThan(content.compressedReadsFromStreams, 10, "size \(size)")
            } else {
                XCTAssertEqual(content.compressedReadsFromStreams, 0, "size \(size)")
            }
            reader.close()
            waitForReadAheadToEnd()
            // After close, reads still work (through the seek index).
            let n = try buffer.withUnsafeMutableBytes { try reader.read(into: $0, at: 1000) }
            XCTAssertTrue(buffer[0..<n].elementsEqual(text[1000..<1000 + n]))
        }
    }

    /// Concurrent readers of one entry, each through its own reader, in 1 MiB requests, and a
    /// reader closed half-way: everyone gets their own bytes.
    func testParallelReadersAndEarlyCloseGetTheirBytes() throws {
        let (container, text) = try makeContainer(size: 11 << 20, seed: 4)
        let content = try container.content(of: "r.txt")
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            let reader = content.makeReader()
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            var offset = 0
            let stop = worker == 3 ? text.count / 2 : text.count
            while offset < stop {
                let n = (try? buffer.withUnsafeMutableBytes { try reader.read(into: $0, at: Int64(offset)) }) ?? -1
                XCTAssertGreaterThan(n, 0)
                if n <= 0 { return }
                XCTAssertTrue(buffer[0..<n].elementsEqual(text[offset..<offset + n]), "worker \(worker) at \(offset)")
                offset += n
            }
            reader.close()
        }
    }

    /// A damaged stream read through a reader (helper thread included) fails, and so does every
    /// later read of the entry.
    func testAReaderOfADamagedStreamFails() throws {
        for damage in [DamagedContainer.Damage.corruptStream, .wrongBytes] {
            let path = folder + "/\(damage.rawValue).asice"
            try DamagedContainer.make(at: path, damage: damage, size: 9 << 20)
            let content = try Container.open(path).content(of: "big.txt")
            let reader = content.makeReader()
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            var offset: Int64 = 0
            var failure: Error?
            while offset < content.size {
                do {
                    offset += Int64(try buffer.withUnsafeMutableBytes { try reader.read(into: $0, at: offset) })
                } catch {
                    failure = error
                    break
                }
            }
            guard case ContainerError.dataMismatch? = failure as? ContainerError else {
                XCTFail("\(damage): expected a data mismatch, got \(String(describing: failure))")
                continue
            }
            XCTAssertThrowsError(try buffer.withUnsafeMutableBytes { try reader.read(into: $0, at: 0) })
            XCTAssertThrowsError(try buffer.withUnsafeMutableBytes { try content.makeReader().read(into: $0, at: 0) })
            if damage == .wrongBytes {
                // Found at the end, after input that came through the read-ahead.
                XCTAssertGreaterThan(try XCTUnwrap(content as? DeflatedEntryContent).compressedReadsFromStreams, 0)
            }
            reader.close()
            waitForReadAheadToEnd()
        }
    }

    private func waitForReadAheadToEnd() {
        let deadline = Date().addingTimeInterval(5)
        while DirectReadAhead.activeStreams > 0 && Date() < deadline { usleep(1000) }
        XCTAssertEqual(DirectReadAhead.activeStreams, 0, "a read-ahead thread outlived its reader")
    }
}

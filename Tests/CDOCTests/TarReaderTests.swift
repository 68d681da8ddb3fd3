import XCTest
@testable import CDOC

/// The tar parser faces what the sender wrote (a sender knows the key): it must survive any bytes.
final class TarReaderTests: XCTestCase {
    private func tar(_ files: [(String, [UInt8])]) -> [UInt8] {
        var out: [UInt8] = []
        for (name, data) in files {
            out += TarWriter.header(name: name, size: Int64(data.count)) + data
            out += [UInt8](repeating: 0, count: TarWriter.padding(after: Int64(data.count)))
        }
        return out + TarWriter.end
    }

    func testTheWritersTarReadsBackInAnyChunking() throws {
        let files = [("a", Array("x".utf8)), (String(repeating: "ü", count: 80), [UInt8](repeating: 3, count: 1500)), ("empty", [])]
        let bytes = tar(files)
        for chunk in [1, 7, 512, 100_000] {
            let sink = MemorySink()
            let reader = TarReader(sink: sink)
            var offset = 0
            while offset < bytes.count {
                try bytes[offset ..< min(bytes.count, offset + chunk)].withUnsafeBytes { try reader.feed($0) }
                offset += chunk
            }
            XCTAssertTrue(reader.isComplete)
            XCTAssertEqual(sink.files.map(\.name), files.map(\.0))
            XCTAssertEqual(sink.files.map(\.bytes), files.map(\.1))
        }
    }

    func testMutatedArchivesOnlyEverThrowCDOCErrors() {
        let bytes = tar([("a.txt", Array("hello".utf8)), (String(repeating: "n", count: 150), [UInt8](repeating: 1, count: 700))])
        var generator = SystemRandomNumberGenerator()
        var refused = 0
        for round in 0 ..< 3000 {
            var mutated = bytes
            for _ in 0 ..< Int.random(in: 1 ... 6, using: &generator) {
                let at = Int.random(in: 0 ..< mutated.count, using: &generator)
                mutated[at] = round % 2 == 0 ? UInt8.random(in: 0 ... 255, using: &generator) : [0x30, 0x37, 0x00, 0x20, 0x78, 0x35][round % 6]
            }
            let reader = TarReader(sink: MemorySink())
            do {
                try mutated.withUnsafeBytes { try reader.feed($0) }
            } catch is CDOCError {
                refused += 1
            } catch {
                XCTFail("not a CDOCError: \(error)")
            }
        }
        XCTAssertGreaterThan(refused, 0)
    }
}

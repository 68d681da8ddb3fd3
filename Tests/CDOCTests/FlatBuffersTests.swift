import XCTest
@testable import CDOC

/// The FlatBuffers reader and builder, and the header they carry, against the independent
/// Python builder (back to front) and against hostile offsets.
final class FlatBuffersTests: XCTestCase {
    func testBuiltTablesReadBack() throws {
        let bytes = FlatBuffersBuilder.build(root: [
            .tables([[.u8(7), .string("üks")], [nil, .string("two"), .i32(-5)]]), .u8(1), .bytes([1, 2, 3]),
        ])
        let root = try FlatBuffersReader(bytes).root()
        XCTAssertEqual(try root.u8(1), 1)
        XCTAssertEqual(try root.bytes(2), [1, 2, 3])
        XCTAssertNil(try root.bytes(9))
        let tables = try XCTUnwrap(try root.tables(0))
        XCTAssertEqual(tables.count, 2)
        XCTAssertEqual(try tables[0].u8(0), 7)
        XCTAssertEqual(try tables[0].string(1), "üks")
        XCTAssertEqual(try tables[1].u8(0, default: 42), 42)
        XCTAssertEqual(try tables[1].i32(2), -5)
        XCTAssertEqual(bytes.count % 4, 0)
    }

    func testOffsetsOutsideTheBufferAreRefused() {
        // root offset past the end; a vtable before the start; a vector longer than the buffer.
        let cases: [[UInt8]] = [
            [0xFF, 0, 0, 0],
            [4, 0, 0, 0, 0x40, 0, 0, 0],
            [8, 0, 0, 0, 6, 0, 8, 0, 4, 0, 0, 0, 6, 0, 0, 0, 4, 0, 0, 0, 0xFF, 0xFF, 0, 0],
        ]
        for bytes in cases {
            XCTAssertThrowsError(try { let root = try FlatBuffersReader(bytes).root(); _ = try root.bytes(0) }(), "\(bytes)")
        }
    }

    func testHeadersFromTheIndependentBuilderParse() throws {
        let scratch = try CDOC2Scratch()
        let ec = try scratch.makeKey("ec:P-384", named: "ec")
        try scratch.pythonEncrypt("py.cdoc2", files: [("x", [1])], ["--ec", ec.publicPath, "e", "--password", "pw", "p", "--iterations", "1000"])
        let (reader, descriptor) = try scratch.open("py.cdoc2")
        close(descriptor)
        XCTAssertEqual(reader.header.records.map(\.keyLabel), ["e", "p"])
        guard case .ecc(.p384, let recipient, let sender) = reader.header.records[0].capsule,
              case .pbkdf2(_, _, 1, 1000) = reader.header.records[1].capsule else { return XCTFail("\(reader.header.records)") }
        XCTAssertEqual(recipient, try scratch.publicKey(ec.publicPath).rawKeyBytes())
        XCTAssertEqual(sender.count, 97)
        // and asicfs's own serialisation of the same records reads back equal.
        let again = try CDOC2Header.parse(reader.header.serialized())
        XCTAssertEqual(again.records.map(\.keyLabel), ["e", "p"])
        XCTAssertEqual(again.records.map(\.encryptedFMK), reader.header.records.map(\.encryptedFMK))
    }
}

extension FlatBuffersTests {
    /// A vector of 60 000 offsets all pointing at one table holding a 100 KB vector: read naively
    /// that is 6 GB of copies; the reader stops at its copy budget instead.
    func testOffsetsPointingManyTimesAtTheSameBytesAreCapped() throws {
        var bytes = FlatBuffersBuilder.build(root: [.tables([[.bytes([UInt8](repeating: 1, count: 100_000))]])])
        let root = try FlatBuffersReader(bytes).root()
        let vectorAt = try XCTUnwrap(try root.field(0, size: 4))
        let vector = try FlatBuffersReader(bytes).follow(vectorAt)
        let firstTable = try FlatBuffersReader(bytes).follow(vector + 4)
        // Rewrite the vector: 60 000 elements, each pointing at the first table.
        let count = 60_000
        var patched = Array(bytes[..<vector])
        let tail = Array(bytes[vector...])
        patched += withUnsafeBytes(of: UInt32(count).littleEndian, Array.init)
        let shift = 4 * count
        for index in 0 ..< count {
            let element = vector + 4 + 4 * index
            let target = firstTable + shift  // the old bytes move up by the new elements
            patched += withUnsafeBytes(of: UInt32(target - element).littleEndian, Array.init)
        }
        patched += tail.dropFirst(4)
        bytes = patched
        XCTAssertThrowsError(try FlatBuffersReader(bytes).root().tables(0).map { try $0.map { try $0.bytes(0) } })
        XCTAssertThrowsError(try CDOC2Header.parse(bytes)) { XCTAssertEqual(($0 as? CDOCError)?.code, .malformed) }
    }
}

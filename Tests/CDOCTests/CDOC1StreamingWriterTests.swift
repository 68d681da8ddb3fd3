import Crypto
import Foundation
import Glibc
import TestTools
import XCTest
@testable import CDOC

/// A file to encrypt that hands out at most `most` bytes per read, and can lie about its size
/// (`actual` bytes behind a declared `size`): a file that changed while it was read.
final class TricklingSource: PlainFileSource {
    let name: String
    let size: Int64
    private let bytes: [UInt8]
    private let most: Int
    private var offset = 0

    init(_ name: String, _ bytes: [UInt8], most: Int = 7_777, declaredSize: Int? = nil) {
        self.name = name
        self.bytes = bytes
        self.most = most
        size = Int64(declaredSize ?? bytes.count)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = min(buffer.count, most, bytes.count - offset)
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
        offset += count
        return count
    }
}

/// The streaming CDOC 1.x writer gives the same bytes the whole-buffer writer gave (kept in
/// `CDOC1ReferenceWriter`), for one file and a DDOC of several, CDOC 1.0 and 1.1, with the
/// transport key and IV fixed; a file that changes size while it is read is one clear error.
final class CDOC1StreamingWriterTests: CDOCTestCase {
    /// The text of `document` without the recipients' `KeyInfo` (key wrapping is randomized:
    /// RSA padding, an ephemeral EC key), which the same unchanged code writes in both.
    private func withoutKeyInfo(_ document: [UInt8]) throws -> [UInt8] {
        let text = String(decoding: document, as: UTF8.self)
        let start = try XCTUnwrap(text.range(of: "<ds:KeyInfo xmlns:ds="))
        // The last one: an RSA recipient's own KeyInfo is followed by the same text.
        let end = try XCTUnwrap(text.range(of: "</ds:KeyInfo>\n<denc:CipherData><denc:CipherValue>", options: .backwards))
        XCTAssertLessThan(start.upperBound, end.lowerBound)
        return Array(text[..<start.lowerBound].utf8) + Array(text[end.lowerBound...].utf8)
    }

    private func streamed(_ files: [(name: String, bytes: [UInt8])], for recipient: CDOCTestKey, format: EncryptedFormat,
                          key: SecretBytes, iv: [UInt8], most: Int = 7_777) throws -> [UInt8] {
        let target = path("streamed-\(UUID().uuidString).cdoc")
        let fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var writer = CDOC1Writer(format: format)
        writer.fixedKeyAndIV = (key, iv)
        try writer.write(files: files.map { TricklingSource($0.name, $0.bytes, most: most) },
                         for: [.certificate(try certificate(recipient))], to: fd)
        return try read(target)
    }

    private func assertSameAsReference(_ files: [(name: String, bytes: [UInt8])], format: EncryptedFormat, recipient: CDOCTestKey,
                                       most: Int = 7_777, line: UInt = #line) throws {
        let key = SecretBytes(randomBytes(format == .cdoc10 ? 16 : 32))
        let iv = randomBytes(format == .cdoc10 ? 16 : 12)
        let reference = try CDOC1ReferenceWriter.document(files: files, for: [try certificate(recipient)], format: format, key: key, iv: iv)
        let written = try streamed(files, for: recipient, format: format, key: key, iv: iv, most: most)
        let sizes = files.map(\.bytes.count)
        let mine = try withoutKeyInfo(written), theirs = try withoutKeyInfo(reference)
        let firstDifference = zip(mine, theirs).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(mine.count, theirs.count)
        XCTAssertTrue(mine == theirs, "\(format) \(sizes) most \(most): \(mine.count) bytes against \(theirs.count), "
                      + "first difference at \(firstDifference)", line: line)
        // And it opens: the recipient part the comparison left out is sound.
        let file = try write("check.cdoc", written)
        let sink = try decrypt(file, with: recipient)
        XCTAssertEqual(sink.files.map(\.name), files.map(\.name), line: line)
        XCTAssertTrue(sink.files.map(\.bytes) == files.map(\.bytes), "\(format) \(sizes) decrypts", line: line)
    }

    /// Sizes around the 48-byte base64 line (the payload with IV and tag ending on a whole line,
    /// or one byte either side), the 16-byte block, and the 1 MiB piece the writer reads.
    func testOneFileIsByteIdenticalToTheWholeBufferWriter() throws {
        let rsa = try key(.rsa, "rsa")
        let ec = try key(.p256, "ec")
        let sizes = [0, 1, 15, 16, 17, 19, 20, 21, 36, 47, 48, 49, 64, 1000, (1 << 20) - 28, (1 << 20) + 333, (2 << 20) + 48]
        for size in sizes {
            let files = [(name: "one.bin", bytes: randomBytes(size))]
            try assertSameAsReference(files, format: .cdoc11, recipient: ec)
            try assertSameAsReference(files, format: .cdoc10, recipient: rsa)
        }
        // Reads of every size, down to a byte at a time.
        for most in [1, 3, 48, 1 << 20] {
            try assertSameAsReference([(name: "pieces.bin", bytes: randomBytes(5_000))], format: .cdoc11, recipient: ec, most: most)
            try assertSameAsReference([(name: "pieces.bin", bytes: randomBytes(5_001))], format: .cdoc10, recipient: rsa, most: most)
        }
    }

    func testSeveralFilesInADDOCAreByteIdenticalToTheWholeBufferWriter() throws {
        let rsa = try key(.rsa, "rsa")
        let ec = try key(.p384, "ec")
        let sets: [[(name: String, bytes: [UInt8])]] = [
            [(name: "a.txt", bytes: Array("a".utf8)), (name: "empty", bytes: [])],
            [(name: "esimene & teine's.txt", bytes: randomBytes(47)), (name: "päev ☀.bin", bytes: randomBytes(48)),
             (name: "[quoted]", bytes: randomBytes(49)), (name: "big.bin", bytes: randomBytes((1 << 20) + 1))],
            (0..<5).map { (name: "part\($0)", bytes: randomBytes(16 * $0 + 1)) },
        ]
        for files in sets {
            try assertSameAsReference(files, format: .cdoc11, recipient: ec)
            try assertSameAsReference(files, format: .cdoc10, recipient: rsa)
            try assertSameAsReference(files, format: .cdoc11, recipient: ec, most: 1)
        }
    }

    /// The DDOC made as a stream is DDOCBuilder's whole one.
    func testTheStreamedDDOCIsTheWholeOne() throws {
        let names = ["esimene.txt", "päev & ☀.bin", "empty", "last 'final'.pdf"]
        let contents = [randomBytes(10_000), randomBytes(70_001), [], randomBytes(3)]
        var streamed: [UInt8] = []
        try CDOC1PlainPayload.produce(zip(names, contents).map { TricklingSource($0, $1, most: 4_097) }) { streamed += $0 }
        XCTAssertEqual(streamed, DDOCBuilder.document(names: names, contents: contents))
    }

    func testAFileThatChangesSizeWhileItIsReadIsOneClearError() throws {
        let ec = try key(.p256, "ec")
        let content = randomBytes(100_000)
        for (declared, how) in [(200_000, "shorter"), (99_999, "longer"), (0, "longer")] {
            for several in [false, true] {
                for format in [EncryptedFormat.cdoc11, .cdoc10] {
                    let files = (several ? [TricklingSource("steady.bin", [1, 2])] : [])
                        + [TricklingSource("changing.bin", content, declaredSize: declared)]
                    let recipient = format == .cdoc10 ? try key(.rsa, "rsa") : ec
                    let fd = open(path("changing.cdoc"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
                    defer { close(fd) }
                    XCTAssertThrowsError(try CDOC1Writer(format: format).write(files: files, for: [.certificate(try certificate(recipient))], to: fd)) {
                        XCTAssertEqual(($0 as? CDOCError)?.code, .io, "\($0)")
                        XCTAssertEqual("\($0)".contains("'changing.bin' became \(how) while it was encrypted"), true, "\($0)")
                        XCTAssertFalse("\($0)".contains("\n"), "one line: \($0)")
                    }
                }
            }
        }
    }

    /// Nothing is written until every recipient's key is wrapped: a refused recipient leaves the file empty.
    func testARefusedRecipientWritesNothing() throws {
        let fd = open(path("refused.cdoc"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(fd) }
        XCTAssertThrowsError(try CDOC1Writer(format: .cdoc10).write(files: [TricklingSource("a", [1])],
                                                                     for: [.certificate(try certificate(try key(.rsa, "rsa"))),
                                                                           .certificate(try certificate(try key(.p256, "ec")))], to: fd))
        XCTAssertEqual(try read(path("refused.cdoc")), [])
    }

    /// Other readers hold a CDOC 1.x whole: a file over 1 GiB is refused up front, as before, with nothing written.
    func testAFileOverOneGibibyteIsRefusedBeforeAnythingIsWritten() throws {
        let fd = open(path("huge.cdoc"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(fd) }
        XCTAssertThrowsError(try CDOC1Writer(format: .cdoc11).write(files: [TricklingSource("huge.bin", [1], declaredSize: (1 << 30) + 1)],
                                                                     for: [.certificate(try certificate(try key(.p256, "ec")))], to: fd)) {
            XCTAssertEqual(($0 as? CDOCError)?.code, .limit, "\($0)")
        }
        XCTAssertEqual(try read(path("huge.cdoc")), [])
    }
}

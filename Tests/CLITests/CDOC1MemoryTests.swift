import Foundation
import TestTools
import XCTest

/// `asicfs decrypt` of a large CDOC 1.1 streams: its peak memory stays far below the file's size,
/// and nothing but asicfs's own words reach standard error (libxml2 once printed there).
final class CDOC1MemoryTests: CLITestCase {
    func testDecryptingA200MegabyteCDOC11StaysFarBelowItsSizeInMemory() throws {
        let ec = try CDOCTestKey.make(.p384, in: work, name: "ec")
        let plain = path("big.bin")
        let size = 200 << 20
        try writeRandomFile(plain, size: size)
        let container = path("big.cdoc")
        assertSuccess(try asicfs(["encrypt", container, plain, "--recipient", ec.certificatePath, "--format", "cdoc"], timeout: 600))
        let containerSize = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: container)[.size] as? Int)
        XCTAssertGreaterThan(containerSize, size, "base64 makes the CDOC 1.1 larger than the file")

        let peak = path("peak-kib")
        let folder = path("out")
        let result = try runTool("/usr/bin/time", ["-f", "%M", "-o", peak, Self.binary, "decrypt", container, "-d", folder,
                                                   "--method", "key", "key-file=\(ec.keyPath)"], timeout: 900)
        assertSuccess(result)
        XCTAssertEqual(result.stderr, "", "nothing on standard error")
        XCTAssertEqual(try runTool("/usr/bin/cmp", [plain, folder + "/big.bin"]).status, 0, "the decrypted file is byte exact")
        let peakKiB = try XCTUnwrap(Int(try String(contentsOfFile: peak, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        print("CDOC1MemoryTests: peak RSS \(peakKiB) KiB decrypting \(containerSize) bytes")
        XCTAssertLessThan(peakKiB * 1024, containerSize / 4, "peak RSS \(peakKiB) KiB for a \(containerSize)-byte CDOC 1.1")
    }
}

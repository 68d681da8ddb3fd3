import Foundation
import TestTools
import XCTest

/// `asicfs decrypt` of a large CDOC 1.1 streams: its peak memory stays far below the file's size,
/// and nothing but asicfs's own words reach standard error (libxml2 once printed there).
/// `asicfs encrypt` to CDOC 1.x streams too (it held the files, the DDOC, the ciphertext and its
/// base64 at once: 1.25 GB for 256 MiB).
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

    /// Peak RSS in bytes of asicfs with `arguments` (GNU time's %M).
    private func peakOf(_ arguments: [String]) throws -> Int {
        let peak = path("peak-\(UUID().uuidString)")
        let result = try runTool("/usr/bin/time", ["-f", "%M", "-o", peak, Self.binary] + arguments, timeout: 900)
        assertSuccess(result)
        XCTAssertEqual(result.stderr, "", "nothing on standard error")
        let kib = try XCTUnwrap(Int(try String(contentsOfFile: peak, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        print("CDOC1MemoryTests: peak RSS \(kib) KiB for asicfs \(arguments.prefix(1).joined())")
        return kib * 1024
    }

    func testEncryptingA200MegabyteFileAsCDOC11StaysFarBelowItsSizeInMemory() throws {
        let ec = try CDOCTestKey.make(.p256, in: work, name: "ec")
        let plain = path("big.bin")
        let size = 200 << 20
        try writeRandomFile(plain, size: size)
        let container = path("big.cdoc")
        let encryptPeak = try peakOf(["encrypt", container, plain, "--recipient", ec.certificatePath, "--format", "cdoc"])
        XCTAssertLessThan(encryptPeak, 64 << 20, "peak RSS encrypting a \(size)-byte file as CDOC 1.1")
        let folder = path("out")
        assertSuccess(try asicfs(["decrypt", container, "-d", folder, "--method", "key", "key-file=\(ec.keyPath)"], timeout: 900))
        XCTAssertEqual(try runTool("/usr/bin/cmp", [plain, folder + "/big.bin"]).status, 0, "the encrypted file decrypts byte exact")
    }

    /// CDOC 1.0 of several files: the DDOC around them is made as it is encrypted, never whole.
    func testEncryptingSeveralLargeFilesAsCDOC10StaysFarBelowTheirSizeInMemory() throws {
        let rsa = try CDOCTestKey.make(.rsa, in: work, name: "rsa")
        let names = (1...3).map { "part\($0).bin" }
        try FileManager.default.createDirectory(atPath: path("in"), withIntermediateDirectories: true)
        for name in names { try writeRandomFile(path("in/\(name)"), size: 40 << 20) }
        let container = path("several.cdoc")
        let encryptPeak = try peakOf(["encrypt", container] + names.map { path("in/\($0)") }
                                     + ["--recipient", rsa.certificatePath, "--format", "cdoc1.0"])
        XCTAssertLessThan(encryptPeak, 64 << 20, "peak RSS encrypting 3 × 40 MiB as a CDOC 1.0 DDOC")
        let folder = path("out")
        assertSuccess(try asicfs(["decrypt", container, "-d", folder, "--method", "key", "key-file=\(rsa.keyPath)"], timeout: 900))
        for name in names {
            XCTAssertEqual(try runTool("/usr/bin/cmp", [path("in/\(name)"), "\(folder)/\(name)"]).status, 0, "\(name) decrypts byte exact")
        }
    }
}

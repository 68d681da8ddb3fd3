import Crypto
import Foundation
import Glibc
import TestTools
import XCTest
@testable import CDOC

/// Collects decrypted files in memory; records whether it was abandoned.
final class MemorySink: PlainFileSink {
    var files: [(name: String, bytes: [UInt8])] = []
    var abandoned = false
    private var current: (String, [UInt8])?

    func begin(name: String, size: Int64?) throws {
        XCTAssertNil(current, "begin before the previous file ended")
        current = (name, [])
    }
    func write(_ bytes: UnsafeRawBufferPointer) throws { current?.1 += Array(bytes) }
    func end() throws {
        if let current { files.append((current.0, current.1)) }
        current = nil
    }
    func abandon() {
        abandoned = true
        files = []
        current = nil
    }
    var byName: [String: [UInt8]] { Dictionary(files.map { ($0.name, $0.bytes) }, uniquingKeysWith: { a, _ in a }) }
}

/// A file to encrypt from memory.
final class MemorySource: PlainFileSource {
    let name: String
    let bytes: [UInt8]
    private var offset = 0
    init(_ name: String, _ bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }
    var size: Int64 { Int64(bytes.count) }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = min(buffer.count, bytes.count - offset)
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
        offset += count
        return count
    }
}

/// A private folder per test, keys in it, and files read and written there.
class CDOCTestCase: XCTestCase {
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("cdoc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func key(_ kind: CDOCTestKey.Kind, _ name: String) throws -> CDOCTestKey {
        try CDOCTestKey.make(kind, in: folder, name: name)
    }

    func certificate(_ key: CDOCTestKey) throws -> Certificate {
        try Certificate.parse(Array(try Data(contentsOf: URL(fileURLWithPath: key.certificatePath))))
    }

    func recipientKey(_ key: CDOCTestKey, withCertificate: Bool = true) throws -> SoftwareRecipientKey {
        let privateKey = try PrivateKey.read(Array(try Data(contentsOf: URL(fileURLWithPath: key.keyPath))))
        return SoftwareRecipientKey(name: URL(fileURLWithPath: key.keyPath).lastPathComponent, privateKey: privateKey,
                                    certificate: withCertificate ? try certificate(key) : nil)
    }

    /// Encrypts `files` with asicfs into `name` and returns its path.
    @discardableResult
    func encrypt(_ files: [(String, [UInt8])], for keys: [CDOCTestKey], format: EncryptedFormat = .cdoc11, as name: String = "out.cdoc") throws -> String {
        let target = path(name)
        let fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        try EncryptedContainer.writer(for: format).write(files: files.map { MemorySource($0.0, $0.1) },
                                                         for: try keys.map { .certificate(try certificate($0)) }, to: fd)
        return target
    }

    func reader(_ file: String) throws -> EncryptedContainerReader {
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        return try EncryptedContainer.open(descriptor: fd)
    }

    /// Decrypts `file` with `key` into memory.
    func decrypt(_ file: String, with key: CDOCTestKey) throws -> MemorySink {
        let sink = MemorySink()
        try reader(file).decrypt(with: .key(try recipientKey(key)), into: sink)
        return sink
    }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        try Data(bytes).write(to: folder.appendingPathComponent(name))
        return path(name)
    }

    func read(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    func randomBytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    /// A CDOC 1.1 (AES-256-GCM, one EC recipient) whose payload seals `plain` with `transportKey`,
    /// in 64-character base64 lines as asicfs and libcdoc write them.
    func cdoc11Document(_ plain: [UInt8], transportKey: SecretBytes, fileName: String) throws -> [UInt8] {
        let iv = randomBytes(12)
        let sealed = try AESGCM.seal(key: transportKey, iv: iv, plain)
        var xml = CDOC1XML(documentFormat: "ENCDOC-XML|1.1")
        xml.open(mimeType: "application/octet-stream", method: CDOC1Names.aes256GCM)
        let recipient = try certificate(try key(.p256, "ec"))
        xml.encryptedKey(for: recipient, try CDOC1KeyTransport.wrap(transportKey, for: recipient, documentFormat: "ENCDOC-XML|1.1"))
        xml.payload(iv + sealed.ciphertext + sealed.tag)
        xml.close(properties: [("DocumentFormat", "ENCDOC-XML|1.1"), ("Filename", fileName)])
        return xml.bytes
    }

    /// Hands `bytes` to `feed` in pieces of `sizes` (repeated until the end).
    func feedInPieces(_ bytes: [UInt8], _ sizes: [Int], _ feed: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        var offset = 0, turn = 0
        while offset < bytes.count {
            let count = min(sizes[turn % sizes.count], bytes.count - offset)
            try bytes.withUnsafeBytes { try feed(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count])) }
            offset += count
            turn += 1
        }
    }
}

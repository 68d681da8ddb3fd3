import Crypto
import Foundation
import Glibc
import TestTools
import XCTest
@testable import CDOC

/// A scratch folder, keys made with the openssl CLI, and the independent Python CDOC2 tool.
final class CDOC2Scratch {
    let folder: String
    static let python = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("contrib/testpki/cdoc2.py").path

    init() throws {
        var template = Array("/tmp/asicfs-cdoc2-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ShellError("mkdtemp failed") }
        folder = String(cString: made)
    }

    deinit { _ = try? Shell.run("/bin/rm", ["-rf", folder]) }

    func path(_ name: String) -> String { folder + "/" + name }

    /// A private key PEM (and its public PEM next to it): "ec:P-256", "ec:P-384", "rsa".
    func makeKey(_ kind: String, named name: String) throws -> (privatePath: String, publicPath: String) {
        let privatePath = path(name + ".key"), publicPath = path(name + ".pub")
        let generated = kind == "rsa"
            ? try Shell.run("/usr/bin/openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", privatePath])
            : try Shell.run("/usr/bin/openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:\(kind.dropFirst(3))", "-out", privatePath])
        XCTAssertEqual(generated.status, 0, generated.stderr)
        let exported = try Shell.run("/usr/bin/openssl", ["pkey", "-in", privatePath, "-pubout", "-out", publicPath])
        XCTAssertEqual(exported.status, 0, exported.stderr)
        return (privatePath, publicPath)
    }

    func recipientKey(_ privatePath: String) throws -> RecipientKey {
        SoftwareRecipientKey(name: privatePath, privateKey: try PrivateKey.read(Array(try Data(contentsOf: URL(fileURLWithPath: privatePath)))))
    }

    func publicKey(_ publicPath: String) throws -> PublicKey {
        try PublicKey.read(Array(try Data(contentsOf: URL(fileURLWithPath: publicPath))))
    }

    /// A self-signed certificate for a key, with this subject.
    func makeCertificate(key privatePath: String, subject: String, named name: String, extensions: [String] = []) throws -> Certificate {
        let out = path(name + ".crt")
        let made = try Shell.run("/usr/bin/openssl", ["req", "-new", "-x509", "-utf8", "-key", privatePath, "-subj", subject, "-days", "30", "-out", out]
                                 + extensions.flatMap { ["-addext", $0] })
        XCTAssertEqual(made.status, 0, made.stderr)
        return try Certificate.parse(Array(try Data(contentsOf: URL(fileURLWithPath: out))))
    }

    @discardableResult
    func python(_ arguments: [String]) throws -> Shell.Output {
        try Shell.run("/usr/bin/python3", [Self.python] + arguments)
    }

    /// Encrypts with the independent Python writer; the files are written here first.
    func pythonEncrypt(_ out: String, files: [(String, [UInt8])], _ arguments: [String]) throws {
        for (name, data) in files { try Data(data).write(to: URL(fileURLWithPath: path(name))) }
        let result = try python(["encrypt", path(out)] + files.map { path($0.0) } + arguments)
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    /// Writes a container with asicfs.
    func write(_ out: String, files: [(String, [UInt8])], for recipients: [RecipientSpec]) throws {
        let descriptor = Glibc.open(path(out), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        defer { close(descriptor) }
        try CDOC2Writer().write(files: files.map { MemorySource($0.0, $0.1) }, for: recipients, to: descriptor)
    }

    /// Opens a container with asicfs (the caller closes nothing: the reader is used at once).
    func open(_ name: String) throws -> (CDOC2Reader, Int32) {
        let descriptor = Glibc.open(path(name), O_RDONLY | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        do {
            let reader = try EncryptedContainer.open(descriptor: descriptor)
            return (reader as! CDOC2Reader, descriptor)
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// Decrypts with asicfs into a memory sink.
    func decrypt(_ name: String, _ unlocker: Unlocker, configure: (CDOC2Reader) -> Void = { _ in }) throws -> MemorySink {
        let (reader, descriptor) = try open(name)
        defer { close(descriptor) }
        configure(reader)
        let sink = MemorySink()
        try reader.decrypt(with: unlocker, into: sink)
        XCTAssertFalse(sink.abandoned)
        return sink
    }

    /// Expects decryption to fail with `code`, the sink abandoned and empty.
    func expectFailure(_ name: String, _ unlocker: Unlocker, _ code: CDOCError.Code,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let (reader, descriptor) = try open(name)
        defer { close(descriptor) }
        let sink = MemorySink()
        XCTAssertThrowsError(try reader.decrypt(with: unlocker, into: sink), file: file, line: line) { error in
            XCTAssertEqual((error as? CDOCError)?.code, code, "\(error)", file: file, line: line)
        }
        XCTAssertTrue(sink.abandoned, "the sink was not abandoned", file: file, line: line)
        XCTAssertTrue(sink.files.isEmpty, file: file, line: line)
    }

    func read(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path(name)))) }
    func write(_ name: String, bytes: [UInt8]) throws { try Data(bytes).write(to: URL(fileURLWithPath: path(name))) }
}

func randomBytes(_ count: Int) -> [UInt8] { (0 ..< count).map { _ in UInt8.random(in: 0 ... 255) } }
func secret(_ text: String) -> SecretBytes { SecretBytes(Array(text.utf8)) }
func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

import Foundation
import XCTest

/// Helpers shared by the container tests: private temporary folders, the corpus, and running
/// the peer tools (Python's zipfile, unzip) that check our output independently.
enum TestSupport {
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    static let corpus = packageRoot + "/Tests/Fixtures/libdigidocpp"

    static func corpusFile(_ name: String) -> String { corpus + "/" + name }

    /// A fresh folder, removed when the test ends.
    static func temporaryFolder(_ test: XCTestCase) throws -> String {
        let path = NSTemporaryDirectory() + "asicfs-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    @discardableResult
    static func write(_ bytes: [UInt8], to path: String) throws -> String {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func read(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Deterministic text-like bytes that deflate compresses about 3:1, like office documents.
    static func textLikeBytes(count: Int, seed: UInt64 = 42) -> [UInt8] {
        let words = ["signature", "container", "the", "of", "and", "digital", "document", "Tallinn", "2026",
                     "ASiC", "manifest", "data", "file", "time", "stamp", "OCSP", "response", "certificate"]
        var state = seed
        var out: [UInt8] = []
        out.reserveCapacity(count + 16)
        while out.count < count {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let word = words[Int(state >> 33) % words.count]
            out.append(contentsOf: word.utf8)
            out.append((state >> 20) & 15 == 0 ? 0x0A : 0x20)
            if (state >> 40) & 7 == 0 { out.append(UInt8(truncatingIfNeeded: state >> 50)) }
        }
        return Array(out.prefix(count))
    }

    struct Output {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs a program and waits for it (no zombies left behind).
    @discardableResult
    static func run(_ program: String, _ arguments: [String], stdin: Data? = nil) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program.hasPrefix("/") ? program : "/usr/bin/env")
        process.arguments = program.hasPrefix("/") ? arguments : [program] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus,
                      stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs a Python snippet with the system Python; `args` are in sys.argv[1:].
    static func python(_ code: String, _ args: [String] = []) throws -> Output {
        try run("python3", ["-c", code] + args)
    }
}

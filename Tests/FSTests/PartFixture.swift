import ASiC
import Configuration
import Foundation
@testable import FS
import Signing
import XCTest

/// A container opened in-process as a `MountRouter`, without FUSE: tests drive its parts
/// (`DataFiles`, `ControlFolder`) directly. The folder is removed and the router closed when the
/// test ends.
final class PartFixture: @unchecked Sendable {
    let folder: String
    let container: String
    private var opened: MountRouter?
    /// The open container (after `open`).
    var router: MountRouter { opened! }

    /// A fresh folder holding `container.asice` (made by the test, nothing opened yet).
    init(_ test: XCTestCase) throws {
        folder = NSTemporaryDirectory() + "asicfs-parts-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        container = folder + "/container.asice"
        test.addTeardownBlock { [self] in
            _ = opened?.close()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    /// Opens the container as a mount would. No trusted list (`tsl = none`), no network.
    @discardableResult
    func open(readOnly: Bool = false, settings: [(String, String)] = []) throws -> MountRouter {
        var configuration = Configuration()
        for (key, value) in settings { try configuration.set(key, value, origin: "test") }
        try configuration.set("tsl", "none", origin: "test")
        try configuration.set("cache-dir", folder + "/cache", origin: "test")
        try configuration.set("notify", "no", origin: "test")
        let environment = try SignatureEnvironment(configuration: configuration, environment: [:])
        let router = try MountRouter(containerPath: container, readOnly: readOnly, environment: environment)
        router.start { _ in }
        opened = router
        return router
    }

    var data: DataFiles { router.data }
    var control: ControlFolder { router.control }

    /// The folder's entries beside the container (spool and rescue folders show up here).
    var besideContainer: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0 != "container.asice" && $0 != "cache" }.sorted()
    }
}

/// Everything an open file of a part holds, read from offset 0.
func readAll(_ part: any MountPart, _ file: AnyObject, stop: () -> Int32? = { nil }) throws -> [UInt8] {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 << 10)
    while true {
        let count = try buffer.withUnsafeMutableBytes { try part.read(file, into: $0, at: Int64(bytes.count), stop: stop) }
        if count == 0 { return bytes }
        bytes += buffer[..<count]
    }
}

/// Opens `name` in `part`, reads it whole and closes it.
func contents(_ part: any MountPart, _ name: String, flags: Int32 = O_RDONLY) throws -> [UInt8] {
    let opened = try part.open(name, flags: flags)
    defer { part.release(opened.file) }
    return try readAll(part, opened.file)
}

/// Writes `bytes` at `offset` through an open file of `part`.
func write(_ part: any MountPart, _ file: AnyObject, _ bytes: [UInt8], at offset: Int64 = 0) throws {
    let written = try bytes.withUnsafeBytes { try part.write(file, $0, at: offset) }
    XCTAssertEqual(written, bytes.count)
}

/// The errno a throwing call failed with (nil if it did not fail).
func errnoOf(_ body: () throws -> Void) -> Int32? {
    do { try body() } catch { return FileSystemError.from(error).code }
    return nil
}

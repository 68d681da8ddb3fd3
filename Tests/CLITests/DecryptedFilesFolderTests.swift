import CDOC
import Foundation
import XCTest
@testable import CLI

/// The sink `decrypt -d DIR` writes through: nothing appears in DIR before `commit`, an abandon at
/// any point (a CDOC2 tag failing after the last byte) leaves DIR as it was, and a taken name
/// refuses the whole set.
final class DecryptedFilesFolderTests: CLITestCase {
    private func put(_ sink: DecryptedFilesFolder, _ name: String, _ text: String) throws {
        try sink.begin(name: name, size: nil)
        try Array(text.utf8).withUnsafeBytes { try sink.write($0) }
        try sink.end()
    }

    private func everything(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    func testNothingAppearsBeforeCommitAndAbandonLeavesNothing() throws {
        let folder = path("out")
        let sink = DecryptedFilesFolder(folder: folder)
        try sink.prepare()
        try put(sink, "a.txt", "first")
        try sink.begin(name: "b.txt", size: nil)
        try Array("half".utf8).withUnsafeBytes { try sink.write($0) }
        XCTAssertEqual(everything(folder).filter { !$0.hasPrefix(".asicfs-decrypt-") }, [], "nothing under its name yet")
        sink.abandon()
        XCTAssertEqual(everything(folder), [], "no file and no private folder left")
    }

    func testCommitPlacesEveryFilePrivately() throws {
        let folder = path("out")
        let sink = DecryptedFilesFolder(folder: folder)
        try sink.prepare()
        try put(sink, "a.txt", "first")
        try put(sink, "b.txt", "second")
        XCTAssertEqual(try sink.commit(), [folder + "/a.txt", folder + "/b.txt"])
        XCTAssertEqual(everything(folder), ["a.txt", "b.txt"])
        XCTAssertEqual(String(decoding: try read(folder + "/b.txt"), as: UTF8.self), "second")
        let mode = try FileManager.default.attributesOfItem(atPath: folder + "/a.txt")[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
    }

    func testATakenNameOrALinkRefusesTheWholeSet() throws {
        let folder = path("out")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder + "/b.txt", withDestinationPath: path("elsewhere"))
        let sink = DecryptedFilesFolder(folder: folder)
        try sink.prepare()
        try put(sink, "a.txt", "first")
        try put(sink, "b.txt", "second")
        XCTAssertThrowsError(try sink.commit()) { XCTAssertTrue("\($0)".contains("exists already"), "\($0)") }
        XCTAssertEqual(everything(folder), ["b.txt"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("elsewhere")), "nothing written through the link")
    }

    func testAnUnsafeNameIsRefusedAgainHere() throws {
        let sink = DecryptedFilesFolder(folder: path("out"))
        try sink.prepare()
        XCTAssertThrowsError(try sink.begin(name: "../escape", size: nil)) { XCTAssertEqual(($0 as? CDOCError)?.code, .unsafeName) }
        sink.abandon()
        XCTAssertEqual(everything(path("out")), [])
    }
}

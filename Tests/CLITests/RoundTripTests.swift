import Foundation
import XCTest

/// create → ls → extract → add → remove, with names that need care, checked with the CLI itself
/// and with two independent ZIP readers (unzip and Python's zipfile).
final class RoundTripTests: CLITestCase {
    struct Payload {
        let name: String
        let data: Data
        let mediaType: String
        let compression: String
        let modified: Date
    }

    static let spacesName = "name with  spaces .txt"
    static let emptyName = "empty.txt"
    static let binaryName = "three MiB.bin"
    static let mtimeBase = Date(timeIntervalSince1970: 1_614_834_367.75)  // 2021-03-04T05:06:07.75Z

    /// Writes the payload files into `work` with distinct, odd-second mtimes (DOS time has only
    /// 2-second steps, so these show whether the exact time is kept).
    func makePayload() throws -> [Payload] {
        try write(Self.awkwardName, "123\n")
        try write(Self.umlautName, "123\n")
        try write(Self.spacesName, String(repeating: "The quick brown fox jumps over the lazy dog.\n", count: 500))
        try write(Self.emptyName, Data())
        try write(Self.binaryName, compressibleBytes(count: 3 << 20))
        let specs: [(String, String, String)] = [
            (Self.awkwardName, "text/plain", "stored"),
            (Self.umlautName, "text/plain", "stored"),
            (Self.spacesName, "text/plain", "deflate"),
            (Self.emptyName, "text/plain", "stored"),
            (Self.binaryName, "application/octet-stream", "deflate"),
        ]
        return try specs.enumerated().map { index, spec in
            let modified = Self.mtimeBase.addingTimeInterval(Double(index) * 3_601)
            try setModificationTime(path(spec.0), modified)
            return Payload(name: spec.0, data: try read(path(spec.0)), mediaType: spec.1, compression: spec.2,
                           modified: modified)
        }
    }

    static func isoSecond(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
    }

    func testCreateListAndExtractKeepAwkwardNamesBytesAndModificationTimes() throws {
        let payload = try makePayload()
        let container = path("round trip.asice")

        let created = try asicfs(["create", container] + payload.map(\.name))
        assertSuccess(created)
        XCTAssertEqual(created.stderr, "")
        XCTAssertEqual(created.stdout, "created \(container) with 5 data files\n")

        // ls --json: the stable machine interface.
        let listing = try listing(container)
        XCTAssertEqual(listing["container"] as? String, container)
        XCTAssertEqual(listing["format"] as? String, "ASiC-E")
        XCTAssertEqual(listing["mimetype"] as? String, "application/vnd.etsi.asic-e+zip")
        XCTAssertEqual(listing["signed"] as? Bool, false)
        XCTAssertEqual((listing["signatures"] as? [Any])?.count, 0)
        let containerSize = try FileManager.default.attributesOfItem(atPath: container)[.size] as? Int
        XCTAssertEqual((listing["size"] as? NSNumber)?.intValue, containerSize)
        let files = dataFiles(of: listing)
        XCTAssertEqual(files.compactMap { $0["name"] as? String }, payload.map(\.name))
        for (entry, expected) in zip(files, payload) {
            let name = expected.name
            XCTAssertEqual((entry["size"] as? NSNumber)?.intValue, expected.data.count, name)
            XCTAssertEqual(entry["media_type"] as? String, expected.mediaType, name)
            XCTAssertEqual(entry["compression"] as? String, expected.compression, name)
            XCTAssertEqual(entry["modified"] as? String, Self.isoSecond(expected.modified), name)
            let compressed = (entry["compressed_size"] as? NSNumber)?.intValue ?? -1
            if expected.compression == "stored" {
                XCTAssertEqual(compressed, expected.data.count, name)
            } else {
                XCTAssertGreaterThan(compressed, 0, name)
                XCTAssertLessThan(compressed, expected.data.count * 3 / 4, name)
            }
        }

        // The table names every file and the state.
        let table = try asicfs(["ls", container])
        assertSuccess(table)
        XCTAssertTrue(table.stdout.hasPrefix("\(container): ASiC-E, 5 data files, not signed\n"), table.stdout)
        for file in payload {
            XCTAssertTrue(table.stdout.contains("  " + file.name + "\n"), "\(file.name) missing from table")
        }

        // extract -d: same bytes, same mtime (to the second), nothing else in the folder.
        let out = work.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let extracted = try asicfs(["extract", container, "-d", out.path])
        assertSuccess(extracted)
        XCTAssertEqual(extracted.stderr, "")
        XCTAssertEqual(extracted.stdout, "")
        XCTAssertEqual(folderContents(out.path), payload.map(\.name).sorted())
        for file in payload {
            let target = out.appendingPathComponent(file.name).path
            XCTAssertEqual(try read(target), file.data, file.name)
            XCTAssertEqual(try modificationSeconds(target), try modificationSeconds(path(file.name)), file.name)
            XCTAssertEqual(try modificationSeconds(target), Int(file.modified.timeIntervalSince1970.rounded(.down)))
        }

        // Without -d, into the current folder; with names, only those.
        let here = work.appendingPathComponent("here")
        try FileManager.default.createDirectory(at: here, withIntermediateDirectories: true)
        assertSuccess(try asicfs(["extract", container, Self.umlautName, Self.spacesName], in: here))
        XCTAssertEqual(folderContents(here.path), [Self.spacesName, Self.umlautName].sorted())
        XCTAssertEqual(try read(here.appendingPathComponent(Self.umlautName).path), payload[1].data)
    }

    func testAddAndRemoveChangeOnlyWhatTheyNameAndKeepTheOthersIntact() throws {
        let payload = try makePayload()
        let container = path("c.asice")
        assertSuccess(try asicfs(["create", container, Self.awkwardName, Self.emptyName]))

        let added = try asicfs(["add", container, Self.umlautName, Self.spacesName, Self.binaryName])
        assertSuccess(added)
        XCTAssertEqual(added.stderr, "")
        XCTAssertEqual(added.stdout, "")
        XCTAssertEqual(try dataFileNames(container),
                       [Self.awkwardName, Self.emptyName, Self.umlautName, Self.spacesName, Self.binaryName])

        let removed = try asicfs(["remove", container, Self.awkwardName, Self.spacesName])
        assertSuccess(removed)
        XCTAssertEqual(removed.stderr, "")
        XCTAssertEqual(try dataFileNames(container), [Self.emptyName, Self.umlautName, Self.binaryName])

        let out = work.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        assertSuccess(try asicfs(["extract", container, "-d", out.path]))
        XCTAssertEqual(folderContents(out.path), [Self.emptyName, Self.umlautName, Self.binaryName].sorted())
        for file in payload where [Self.emptyName, Self.umlautName, Self.binaryName].contains(file.name) {
            let target = out.appendingPathComponent(file.name).path
            XCTAssertEqual(try read(target), file.data, file.name)
            XCTAssertEqual(try modificationSeconds(target), try modificationSeconds(path(file.name)), file.name)
        }

        // Removing everything leaves a valid empty container.
        assertSuccess(try asicfs(["remove", container, Self.emptyName, Self.umlautName, Self.binaryName]))
        XCTAssertEqual(try dataFileNames(container), [])
        try assertReadableByOtherZipTools(container, dataFiles: [])
    }

    func testContainersWrittenByTheCLIPassUnzipAndPythonZipfile() throws {
        let payload = try makePayload()
        let container = path("c.asice")
        let byName = Dictionary(uniqueKeysWithValues: payload.map { ($0.name, $0) })

        // A fresh container (create), an appended one (add), a rewritten one (remove, add --replace).
        assertSuccess(try asicfs(["create", container, Self.awkwardName, Self.spacesName]))
        try assertReadableByOtherZipTools(container, dataFiles: [byName[Self.awkwardName]!, byName[Self.spacesName]!])

        assertSuccess(try asicfs(["add", container, Self.umlautName, Self.emptyName, Self.binaryName]))
        try assertReadableByOtherZipTools(container, dataFiles: [Self.awkwardName, Self.spacesName, Self.umlautName,
                                                                 Self.emptyName, Self.binaryName].map { byName[$0]! })

        assertSuccess(try asicfs(["remove", container, Self.spacesName]))
        try assertReadableByOtherZipTools(container, dataFiles: [Self.awkwardName, Self.umlautName, Self.emptyName,
                                                                 Self.binaryName].map { byName[$0]! })

        try write(Self.umlautName, "replaced content\n")
        assertSuccess(try asicfs(["add", container, Self.umlautName, "--replace"]))
        let replaced = Payload(name: Self.umlautName, data: Data("replaced content\n".utf8), mediaType: "text/plain",
                               compression: "stored", modified: Date())
        try assertReadableByOtherZipTools(container, dataFiles: [byName[Self.awkwardName]!, byName[Self.emptyName]!,
                                                                 byName[Self.binaryName]!, replaced])
    }

    func testEmptyContainerCanBeCreatedListedAndFilledLater() throws {
        let container = path("empty.asice")
        let created = try asicfs(["create", container])
        assertSuccess(created)
        XCTAssertEqual(created.stdout, "created \(container) with 0 data files\n")
        let listing = try listing(container)
        XCTAssertEqual(dataFiles(of: listing).count, 0)
        XCTAssertEqual(listing["signed"] as? Bool, false)
        try assertReadableByOtherZipTools(container, dataFiles: [])

        try write("later.txt", "later\n")
        assertSuccess(try asicfs(["add", container, "later.txt"]))
        XCTAssertEqual(try dataFileNames(container), ["later.txt"])
        let out = try asicfs(["extract", container, "later.txt", "--stdout"])
        assertSuccess(out)
        XCTAssertEqual(out.stdout, "later\n")
    }

    func testIncompressibleDataIsStoredNotDeflated() throws {
        let container = path("c.asice")
        try writeRandomFile(path("noise.bin"), size: 1 << 20)
        try write("photo.jpg", compressibleBytes(count: 100_000))
        assertSuccess(try asicfs(["create", container, "noise.bin", "photo.jpg"]))
        let files = dataFiles(of: try listing(container))
        XCTAssertEqual(files.count, 2)
        // Random bytes do not shrink; a .jpg is never deflated again, even when it could shrink.
        for file in files {
            XCTAssertEqual(file["compression"] as? String, "stored", "\(file)")
            XCTAssertEqual((file["compressed_size"] as? NSNumber)?.intValue, (file["size"] as? NSNumber)?.intValue)
        }
        XCTAssertEqual(files.last?["media_type"] as? String, "image/jpeg")
        let out = try asicfs(["extract", container, "-p", "noise.bin"])
        XCTAssertEqual(out.stdoutData, try read(path("noise.bin")))
    }

    /// Checks a container with `unzip -t` and Python's zipfile: entry order, mimetype first and
    /// stored without extra field, the manifest listing exactly the data files, and every CRC.
    func assertReadableByOtherZipTools(_ container: String, dataFiles: [Payload],
                                       file: StaticString = #filePath, line: UInt = #line) throws {
        let names = dataFiles.map(\.name)
        let unzip = try runTool("/usr/bin/env", ["unzip", "-t", container])
        XCTAssertEqual(unzip.status, 0, "unzip -t: \(unzip.stdout) \(unzip.stderr)", file: file, line: line)
        XCTAssertTrue(unzip.stdout.contains("No errors detected in compressed data of"), unzip.stdout, file: file, line: line)
        XCTAssertTrue(unzip.stdout.contains("testing: mimetype"), unzip.stdout, file: file, line: line)

        let python = try inspectWithPython(container)
        XCTAssertEqual(python["names"] as? [String], ["mimetype"] + names + ["META-INF/manifest.xml"], file: file, line: line)
        XCTAssertEqual(python["first"] as? String, "mimetype", file: file, line: line)
        XCTAssertEqual(python["firstStored"] as? Bool, true, file: file, line: line)
        XCTAssertEqual(python["firstExtraLength"] as? Int, 0, file: file, line: line)
        XCTAssertEqual(python["mimetype"] as? String, "application/vnd.etsi.asic-e+zip", file: file, line: line)
        XCTAssertTrue(python["bad"] is NSNull, "zipfile.testzip found a bad entry: \(python["bad"] ?? "")", file: file, line: line)

        let manifest = python["manifest"] as? [[String: String]] ?? []
        XCTAssertEqual(manifest.first?["path"], "/", file: file, line: line)
        XCTAssertEqual(manifest.first?["mediaType"], "application/vnd.etsi.asic-e+zip", file: file, line: line)
        XCTAssertEqual(manifest.dropFirst().compactMap { $0["path"] }, names, "manifest lists other files", file: file, line: line)
        XCTAssertEqual(manifest.dropFirst().compactMap { $0["mediaType"] }, dataFiles.map(\.mediaType), file: file, line: line)

        let sizes = python["sizes"] as? [String: Int] ?? [:]
        for data in dataFiles {
            XCTAssertEqual(sizes[data.name], data.data.count, data.name, file: file, line: line)
        }
        // The CLI reads it back with the same bytes.
        for data in dataFiles {
            let out = try asicfs(["extract", container, data.name, "-p"])
            XCTAssertEqual(out.status, 0, out.stderr, file: file, line: line)
            XCTAssertEqual(out.stdoutData, data.data, data.name, file: file, line: line)
        }
    }
}

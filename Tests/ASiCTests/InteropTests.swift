@testable import ASiC
import TestTools
import XCTest

/// Containers we write open in Python's zipfile and pass `unzip -t`; containers written by
/// `zip` and by zipfile (data descriptors, ZIP64) open in ours.
final class InteropTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = try TestSupport.temporaryFolder(self)
    }

    /// Writes the payloads with awkward names and returns (name, bytes) pairs.
    private func awkwardPayloads() throws -> [(String, [UInt8])] {
        var files: [(String, [UInt8])] = []
        for name in [TestContainers.awkwardName, TestContainers.umlautName] {
            files.append((name, Array("123\n".utf8)))
        }
        files.append(("name with spaces.txt", Array("spaces\n".utf8)))
        files.append(("empty.bin", []))
        files.append(("big text.txt", textLikeBytes(count: 3 << 20)))
        files.append(("photo.jpg", (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 13) }))
        for (name, bytes) in files { try TestSupport.write(bytes, to: folder + "/src-" + name) }
        return files
    }

    func testRoundTripWithAwkwardNamesEmptyFilesAndBigFiles() throws {
        let files = try awkwardPayloads()
        let path = folder + "/awkward.asice"
        let created = try Container.create(
            at: path, files: files.map { NewDataFile(sourcePath: folder + "/src-" + $0.0, name: $0.0) })
        XCTAssertEqual(created.dataFiles.map(\.name), files.map(\.0))

        let reopened = try Container.open(path)
        for (name, bytes) in files {
            var read: [UInt8] = []
            try reopened.read(name) { read += $0 }
            XCTAssertEqual(read, bytes, name)
        }
        XCTAssertTrue(reopened.dataFile(named: "big text.txt")!.isCompressed, "text is deflated")
        XCTAssertFalse(reopened.dataFile(named: "photo.jpg")!.isCompressed, "JPEG is stored as it is")
        XCTAssertEqual(reopened.dataFile(named: "öäüõ.txt")!.mediaType, "text/plain")

        let unzip = try Shell.run("unzip", ["-t", path])
        XCTAssertEqual(unzip.status, 0, unzip.stdout + unzip.stderr)
        XCTAssertTrue(unzip.stdout.contains("No errors detected"), unzip.stdout)

        // Python checks the bytes, the first entry and the manifest independently.
        let python = try Shell.python("""
            import zipfile, sys, xml.etree.ElementTree as ET
            z = zipfile.ZipFile(sys.argv[1])
            assert z.testzip() is None
            first = z.infolist()[0]
            assert first.filename == 'mimetype' and first.compress_type == zipfile.ZIP_STORED and first.extra == b''
            assert z.read('mimetype') == b'application/vnd.etsi.asic-e+zip'
            ns = '{urn:oasis:names:tc:opendocument:xmlns:manifest:1.0}'
            m = ET.fromstring(z.read('META-INF/manifest.xml'))
            paths = [e.get(ns + 'full-path') for e in m]
            print('\\n'.join(paths))
            for name in paths[1:]:
                assert z.read(name) == open(sys.argv[2] + '/src-' + name, 'rb').read(), name
            """, [path, folder])
        XCTAssertEqual(python.status, 0, python.stderr)
        XCTAssertEqual(python.stdout.split(separator: "\n").map(String.init), ["/"] + files.map(\.0))
    }

    func testContainersWrittenByZipOpen() throws {
        let work = folder + "/zipwork"
        try FileManager.default.createDirectory(atPath: work + "/META-INF", withIntermediateDirectories: true)
        try TestSupport.write(Array(MediaType.asicE.utf8), to: work + "/mimetype")
        try TestSupport.write(Array("hello from zip\n".utf8), to: work + "/hello.txt")
        try TestSupport.write(Manifest(containerMediaType: MediaType.asicE,
                                       files: [.init(fullPath: "hello.txt", mediaType: "text/plain")]).serialized(),
                              to: work + "/META-INF/manifest.xml")
        let path = folder + "/byzip.asice"
        // -X: no extra fields, -0 for mimetype, then the rest deflated (the classic recipe).
        let first = try Shell.run("/bin/sh", ["-c", "cd '\(work)' && zip -X -0 -q '\(path)' mimetype && zip -X -r -q '\(path)' hello.txt META-INF"])
        XCTAssertEqual(first.status, 0, first.stderr)
        let container = try Container.open(path)
        XCTAssertEqual(container.dataFiles.map(\.name), ["hello.txt"])
        var bytes: [UInt8] = []
        try container.read("hello.txt") { bytes += $0 }
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "hello from zip\n")
    }

    func testContainersWrittenByPythonWithDataDescriptorsAndZip64Open() throws {
        let payload = textLikeBytes(count: 300_000)
        try TestSupport.write(payload, to: folder + "/payload.txt")
        let script = """
            import zipfile, sys, io
            class Unseekable(io.RawIOBase):
                def __init__(self, f): self.f = f
                def writable(self): return True
                def write(self, b): return self.f.write(b)
            def build(path, zip64, stream):
                raw = open(path, 'wb')
                target = Unseekable(raw) if stream else raw
                with zipfile.ZipFile(target, 'w') as z:
                    z.writestr(zipfile.ZipInfo('mimetype'), 'application/vnd.etsi.asic-e+zip')
                    with z.open(zipfile.ZipInfo('dir/payload.txt'), 'w', force_zip64=zip64) as f:
                        f.write(open(sys.argv[2], 'rb').read())
                    z.writestr('META-INF/manifest.xml', '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"/><manifest:file-entry manifest:full-path="dir/payload.txt" manifest:media-type="text/plain"/></manifest:manifest>')
                raw.close()
            build(sys.argv[1] + '/descriptor.asice', False, True)
            build(sys.argv[1] + '/zip64.asice', True, False)
            z = zipfile.ZipFile(sys.argv[1] + '/descriptor.asice')
            print(z.getinfo('dir/payload.txt').flag_bits & 8)
            """
        let result = try Shell.python(script, [folder, folder + "/payload.txt"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "8", "data descriptor written")
        let zip64Bytes = try TestSupport.read(folder + "/zip64.asice")
        XCTAssertNotNil(zip64Bytes.firstRange(of: [0x01, 0x00, 0x10, 0x00]), "a ZIP64 extra field is present")
        for name in ["descriptor.asice", "zip64.asice"] {
            let container = try Container.open(folder + "/" + name)
            XCTAssertEqual(container.dataFiles.map(\.name), ["dir/payload.txt"], name)
            var bytes: [UInt8] = []
            try container.read("dir/payload.txt") { bytes += $0 }
            XCTAssertEqual(bytes, payload, name)
            // And it stays valid after we rewrite it (descriptors and ZIP64 normalised).
            var edit = container.edit()
            try edit.rename("dir/payload.txt", to: "renamed.txt")
            let saved = try edit.save()
            var again: [UInt8] = []
            try saved.read("renamed.txt") { again += $0 }
            XCTAssertEqual(again, payload, name)
            XCTAssertEqual(try Shell.run("unzip", ["-tq", folder + "/" + name]).status, 0, name)
        }
    }

    func testZip64EndRecordsAreWrittenForManyEntries() throws {
        // 70,000 entries need the ZIP64 end of central directory (over 65,535 entries).
        let path = folder + "/many.zip"
        let output = try PosixFile.createExclusive(path, mode: 0o644)
        let writer = ZipWriter(file: output)
        var entries = [try writer.write(name: "mimetype", bytes: Array(MediaType.asicE.utf8), compress: false,
                                        modified: Date(), timestampExtra: false)]
        for i in 0..<70_000 {
            entries.append(try writer.write(name: "f\(i).txt", bytes: Array("\(i)".utf8), compress: false,
                                            modified: Date(), timestampExtra: true))
        }
        let manifest = Manifest(containerMediaType: MediaType.asicE,
                                files: (0..<70_000).map { .init(fullPath: "f\($0).txt", mediaType: "text/plain") })
        entries.append(try writer.write(name: Manifest.path, bytes: manifest.serialized(), compress: true,
                                        modified: Date(), timestampExtra: false))
        try writer.finish(entries)
        let container = try Container.open(path)
        XCTAssertEqual(container.dataFiles.count, 70_000)
        var last: [UInt8] = []
        try container.read("f69999.txt") { last += $0 }
        XCTAssertEqual(String(decoding: last, as: UTF8.self), "69999")
        let python = try Shell.python("import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); print(len(z.namelist())); print(z.read('f12345.txt').decode())", [path])
        XCTAssertEqual(python.stdout, "70002\n12345\n", python.stderr)
    }

    func testEmptyAndNonZipFilesAreRefusedWithAReason() throws {
        let empty = try TestSupport.write([], to: folder + "/empty.asice")
        XCTAssertThrowsError(try Container.open(empty)) { XCTAssertTrue("\($0)".contains("empty (0 bytes)"), "\($0)") }
        let text = try TestSupport.write(Array("just text, no zip here".utf8), to: folder + "/text.asice")
        XCTAssertThrowsError(try Container.open(text)) { XCTAssertTrue("\($0)".contains("end-of-central-directory"), "\($0)") }
        let plainZip = folder + "/plain.zip"
        _ = try Shell.python("import zipfile,sys; zipfile.ZipFile(sys.argv[1],'w').writestr('a.txt','a')", [plainZip])
        XCTAssertThrowsError(try Container.open(plainZip)) { XCTAssertTrue("\($0)".contains("no 'mimetype' entry"), "\($0)") }
        XCTAssertThrowsError(try Container.open(folder)) { XCTAssertTrue("\($0)".contains("Is a directory"), "\($0)") }
    }

    func testCreatingOverAZeroByteFileWorksButNeverOverAnything() throws {
        let placeholder = try TestSupport.write([], to: folder + "/placeholder.asice")
        try TestSupport.write(Array("x".utf8), to: folder + "/x.txt")
        let created = try Container.create(at: placeholder, files: [NewDataFile(sourcePath: folder + "/x.txt")])
        XCTAssertEqual(created.dataFiles.map(\.name), ["x.txt"])
        let before = try TestSupport.read(placeholder)
        XCTAssertThrowsError(try Container.create(at: placeholder, files: [])) {
            XCTAssertTrue("\($0)".contains("already exists"), "\($0)")
        }
        XCTAssertEqual(try TestSupport.read(placeholder), before)
    }

    func testAnEmptyContainerIsValid() throws {
        let path = folder + "/new.asice"
        let container = try Container.create(at: path, files: [])
        XCTAssertEqual(container.dataFiles.count, 0)
        XCTAssertEqual(try Shell.run("unzip", ["-tq", path]).status, 0)
    }
}

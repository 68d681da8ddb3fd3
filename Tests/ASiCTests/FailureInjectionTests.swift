@testable import ASiC
import TestTools
import XCTest

/// Saves that fail part-way (full disk, read-only filesystem) leave the original byte-identical
/// and no temporary behind. These tests mount small tmpfs filesystems, so they run as root
/// (as CI does).
final class FailureInjectionTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = try TestSupport.temporaryFolder(self)
    }

    /// Mounts a tmpfs of `size` at a new folder and unmounts it when the test ends.
    private func smallFilesystem(_ size: String) throws -> String {
        let mountpoint = folder + "/fs-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        let result = try Shell.run("mount", ["-t", "tmpfs", "-o", "size=\(size),mode=0755", "tmpfs", mountpoint])
        XCTAssertEqual(result.status, 0, "mounting a tmpfs needs root: \(result.stderr)")
        addTeardownBlock { _ = try? Shell.run("umount", ["-l", mountpoint]) }
        return mountpoint
    }

    private func incompressible(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count / 8).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } }
    }

    private func leftovers(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".asicfs-") }
    }

    func testAFullDiskLeavesTheOriginalIntact() throws {
        let disk = try smallFilesystem("3m")
        let path = disk + "/doc.asice"
        try TestSupport.write(textLikeBytes(count: 1 << 20), to: folder + "/text.txt")
        try Container.create(at: path, files: [NewDataFile(sourcePath: folder + "/text.txt")])
        let before = try TestSupport.read(path)
        try TestSupport.write(incompressible(4 << 20), to: folder + "/big.bin")

        // Append path.
        var edit = try Container.open(path).edit()
        try edit.add(NewDataFile(sourcePath: folder + "/big.bin"))
        XCTAssertThrowsError(try edit.save()) { error in
            XCTAssertEqual((error as? ContainerError)?.errno, ENOSPC, "\(error)")
            XCTAssertTrue("\(error)".contains("No space left on device"), "\(error)")
        }
        XCTAssertEqual(try TestSupport.read(path), before)
        XCTAssertEqual(try leftovers(in: disk), [])

        // Rewrite path.
        edit = try Container.open(path).edit()
        try edit.rename("text.txt", to: "renamed.txt")
        try edit.add(NewDataFile(sourcePath: folder + "/big.bin"))
        XCTAssertThrowsError(try edit.save())
        XCTAssertEqual(try TestSupport.read(path), before)
        XCTAssertEqual(try leftovers(in: disk), [])

        // And once there is room again, the same change works.
        edit = try Container.open(path).edit()
        try edit.rename("text.txt", to: "renamed.txt")
        XCTAssertEqual(try edit.save().dataFiles.map(\.name), ["renamed.txt"])
    }

    func testAReadOnlyFilesystemLeavesTheOriginalIntact() throws {
        let disk = try smallFilesystem("2m")
        let path = disk + "/doc.asice"
        try TestSupport.write(Array("hello".utf8), to: folder + "/a.txt")
        try Container.create(at: path, files: [NewDataFile(sourcePath: folder + "/a.txt")])
        let before = try TestSupport.read(path)
        let remount = try Shell.run("mount", ["-o", "remount,ro", disk])
        XCTAssertEqual(remount.status, 0, remount.stderr)
        var edit = try Container.open(path).edit()
        try edit.add(NewDataFile(sourcePath: folder + "/a.txt", name: "b.txt"))
        XCTAssertThrowsError(try edit.save()) { error in
            XCTAssertEqual((error as? ContainerError)?.errno, EROFS, "\(error)")
        }
        XCTAssertEqual(try TestSupport.read(path), before)
    }

    func testAFolderWithoutWritePermissionForAnOrdinaryUser() throws {
        // Root ignores mode bits, so drop to an unprivileged user in a child process.
        let path = folder + "/doc.asice"
        try TestSupport.write(Array("hello".utf8), to: folder + "/a.txt")
        try Container.create(at: path, files: [NewDataFile(sourcePath: folder + "/a.txt")])
        chmod(folder, 0o755)
        chmod(path, 0o644)
        try TestSupport.write(Array("bravo".utf8), to: folder + "/b.txt")
        chmod(folder + "/b.txt", 0o644)
        let before = try TestSupport.read(path)
        let tool = TestSupport.packageRoot + "/.build/debug/asicfs"
        if FileManager.default.isExecutableFile(atPath: tool) {
            let result = try Shell.run("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", tool,
                                                          "add", path, folder + "/b.txt"])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("Permission denied"), result.stderr)
        } else {
            XCTFail("build the asicfs executable first (make test does)")
        }
        XCTAssertEqual(try TestSupport.read(path), before)
    }

    /// On a filesystem with reflinks (XFS here), adding a file clones the container's blocks
    /// instead of copying them: the new container shares its extents with the old one.
    func testAddingOnAReflinkFilesystemSharesTheExistingBlocks() throws {
        let image = folder + "/xfs.img"
        let mountpoint = folder + "/xfs"
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        XCTAssertEqual(try Shell.run("truncate", ["-s", "400M", image]).status, 0)
        let mkfs = try Shell.run("mkfs.xfs", ["-q", "-m", "reflink=1", image])
        XCTAssertEqual(mkfs.status, 0, "mkfs.xfs (xfsprogs): \(mkfs.stderr)")
        let mounted = try Shell.run("mount", ["-o", "loop", image, mountpoint])
        XCTAssertEqual(mounted.status, 0, "loop mounts need root: \(mounted.stderr)")
        addTeardownBlock { _ = try? Shell.run("umount", ["-l", mountpoint]) }

        let path = mountpoint + "/big.asice"
        try TestSupport.write(incompressible(16 << 20), to: folder + "/big.bin")
        try TestSupport.write(Array("small".utf8), to: folder + "/small.txt")
        let old = try Container.create(at: path, files: [NewDataFile(sourcePath: folder + "/big.bin")])
        var edit = old.edit()
        try edit.add(NewDataFile(sourcePath: folder + "/small.txt"))
        let new = try edit.save()
        XCTAssertEqual(new.dataFiles.map(\.name), ["big.bin", "small.txt"])
        // `old` still holds the previous inode open, so shared extents are visible now.
        let extents = try Shell.run("filefrag", ["-v", path])
        XCTAssertTrue(extents.stdout.contains("shared"), extents.stdout)
        XCTAssertEqual(old.dataFiles.count, 1)
    }
}

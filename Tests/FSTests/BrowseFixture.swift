import Foundation
import TestTools
import XCTest

/// A browse mount: a real folder `tree/` (containers made with `asicfs create`) mounted on `mnt/`.
final class BrowseFixture {
    let mount: MountFixture
    let tree: String
    var mountpoint: String { mount.mountpoint }

    init(_ test: XCTestCase) throws {
        mount = try MountFixture(test)
        tree = mount.folder + "/tree"
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
    }

    func start(_ options: [String] = [], environment: [String: String] = [:]) throws {
        try mount.mount(options, container: tree, environment: environment)
    }

    /// A container at `relative` in the tree holding `files` (name -> text).
    func makeContainer(_ relative: String, _ files: [String: String]) throws {
        let path = tree + "/" + relative
        try FileManager.default.createDirectory(atPath: PathNames.parent(path), withIntermediateDirectories: true)
        let sources = mount.folder + "/sources-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: sources, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: sources) }
        var paths: [String] = []
        for (name, text) in files.sorted(by: { $0.key < $1.key }) {
            try writeFile(Array(text.utf8), sources + "/" + name)
            paths.append(sources + "/" + name)
        }
        let created = try Shell.run(MountFixture.binary, ["create", "-q", path] + paths)
        guard created.status == 0 else { throw MountError("create: \(created.stderr)") }
    }

    func real(_ relative: String) -> String { tree + "/" + relative }
    func path(_ relative: String) -> String { mountpoint + "/" + relative }

    /// The daemon's open container files (its descriptors of files with a container's name).
    /// The containers the daemon has open (each once: an open container holds its file twice,
    /// to read it and for its lock).
    func openContainerFiles() -> [String] {
        guard let pid = mount.pid, let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return [] }
        let paths = fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
            .filter { $0.lowercased().hasSuffix(".asice") && !$0.contains(".asicfs-") }
        return Array(Set(paths)).sorted()
    }
}

enum PathNames {
    static func parent(_ path: String) -> String { (path as NSString).deletingLastPathComponent }
}

/// Waits (at most `seconds`) until `condition` holds; true if it did.
func eventually(_ seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(50_000)
    }
    return condition()
}

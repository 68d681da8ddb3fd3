import ASiC
import Foundation

let extractCommand = Command(
    name: "extract",
    synopsis: "extract CONTAINER [NAME...] [-d DIR]",
    summary: "copy data files out of a container",
    details: """
    Extracts the named data files (all of them when no NAME is given) into DIR (default: the
    current folder), recreating subfolders for names with '/'. Each file is checked against its
    CRC-32 and size before it appears; existing files are not overwritten without --force, and
    symbolic links inside DIR are never followed. With --stdout the bytes go to standard output.
    """,
    options: [
        OptionSpec(names: ["-d", "--directory"], takesValue: true, help: "extract into this folder"),
        OptionSpec(names: ["-p", "--stdout"], takesValue: false, help: "write the data to standard output"),
        OptionSpec(names: ["-f", "--force"], takesValue: false, help: "overwrite existing files"),
        jsonOption,
    ],
    run: { arguments, context in
        try requirePositionals(arguments, atLeast: 1, "CONTAINER")
        let container = try Container.open(arguments.positionals[0])
        // Sets, not searches through the list: a container may hold a million names.
        var names: [String] = []
        var seen = Set<String>()
        for name in arguments.positionals.dropFirst() where seen.insert(name).inserted { names.append(name) }
        if names.isEmpty { names = container.dataFiles.map(\.name) }
        for name in names where container.dataFile(named: name) == nil { throw ContainerError.noSuchFile(name) }
        // A foreign container may hold both "a" and "a/b": no folder can show both.
        var folders = Set<String>()
        for name in names { PathText.insertFolders(of: name, into: &folders) }
        for name in names where folders.contains(name) {
            throw ContainerError.refused("'\(name)' is both a file and a folder in the container; extract the two separately, into different folders")
        }
        let total = names.reduce(Int64(0)) { $0 + (container.dataFile(named: $1)?.size ?? 0) }
        let progress = ProgressLine("extracting", quiet: context.quiet)
        defer { progress.finish() }
        var done: Int64 = 0
        if arguments.has("--stdout") {
            if arguments.has("--json") { throw UsageError("--json and --stdout cannot go together: the data is the output") }
            for name in names {
                try container.read(name) { chunk in
                    try writeAll(STDOUT_FILENO, chunk, what: "standard output")
                    done += Int64(chunk.count)
                    progress.update(done: done, total: total)
                }
            }
            return 0
        }
        let extractor = Extractor(folder: arguments.value("--directory") ?? ".", overwrite: arguments.has("--force"))
        try extractor.prepareFolder()
        let targets = try names.map { try extractor.target(for: $0) }
        for (name, target) in zip(names, targets) {
            try extractor.extract(name, from: container, to: target) { count in
                done += Int64(count)
                progress.update(done: done, total: total)
            }
        }
        if arguments.has("--json") {
            CommandJSON.success("extract", container: arguments.positionals[0], ["extracted": .list(zip(names, targets).map { name, target in
                .object(["name": .text(name), "path": .text(target)])
            })])
        }
        return 0
    })

/// Writes the whole buffer to a descriptor (pipes may take it in pieces).
func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, what: String) throws {
    var offset = 0
    while offset < buffer.count {
        let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            throw ContainerError.io(path: what, operation: "cannot write to", errno: errno)
        }
        offset += n
    }
}

/// Places extracted files safely: inside the target folder only, never through a symbolic link,
/// never over an existing file unless asked, and never half-written (temporary, then rename).
final class Extractor {
    let folder: String
    let overwrite: Bool
    /// Subfolders made (or found) already: each is created once, not once per file in it.
    private var madeFolders = Set<String>()

    init(folder: String, overwrite: Bool) {
        self.folder = folder
        self.overwrite = overwrite
    }

    /// Creates the target folder when it is missing (like unzip -d); fails unless it is a folder.
    func prepareFolder() throws {
        var st = stat()
        if stat(folder, &st) != 0 {
            do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                throw ContainerError.io(path: folder, operation: "cannot create", errno: errno == 0 ? EACCES : errno)
            }
        }
        guard stat(folder, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else {
            throw ContainerError.io(path: folder, operation: "cannot extract into", errno: ENOTDIR)
        }
    }

    /// The path `name` will be written to; checks everything that can be checked before writing
    /// (`prepareFolder` first).
    func target(for name: String) throws -> String {
        let components = name.split(separator: "/").map(String.init)
        var path = folder
        var st = stat()
        for (index, component) in components.enumerated() {
            path += "/" + component
            guard lstat(path, &st) == 0 else { continue }
            let type = st.st_mode & S_IFMT
            if type == S_IFLNK {
                throw ContainerError.refused("\(path) is a symbolic link; not following it")
            }
            let isLast = index == components.count - 1
            if !isLast && type != S_IFDIR {
                throw ContainerError.refused("\(path) exists and is not a folder")
            }
            if isLast {
                if type == S_IFDIR { throw ContainerError.refused("\(path) is a folder") }
                if !overwrite { throw ContainerError.refused("\(path) already exists (use --force to overwrite)") }
            }
        }
        return path
    }

    func extract(_ name: String, from container: Container, to target: String, progress: (Int) -> Void) throws {
        let parent = PathText.folder(of: target)
        if madeFolders.insert(parent).inserted {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        }
        let temporaryPath = "\(parent)/.\(PathText.lastComponent(of: target)).asicfs-\(getpid()).part"
        unlink(temporaryPath)
        let output: PosixFile
        do {
            output = try PosixFile.createExclusive(temporaryPath)
        } catch ContainerError.io(_, _, let code) {
            throw ContainerError.io(path: target, operation: "cannot create", errno: code)
        }
        do {
            var offset: Int64 = 0
            try container.read(name) { chunk in
                try output.write(chunk, at: offset)
                offset += Int64(chunk.count)
                progress(chunk.count)
            }
            let mask = umask(0o022); umask(mask)
            fchmod(output.fd, 0o666 & ~mask)
            if let modified = container.dataFile(named: name)?.modified {
                var times = [timespec](repeating: timespec(tv_sec: time_t(modified.timeIntervalSince1970), tv_nsec: 0), count: 2)
                futimens(output.fd, &times)
            }
            guard rename(temporaryPath, target) == 0 else {
                throw ContainerError.io(path: target, operation: "cannot create", errno: errno)
            }
        } catch {
            unlink(temporaryPath)
            throw error
        }
    }
}

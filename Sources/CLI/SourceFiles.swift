import ASiC
import Foundation

/// The FILE arguments of `create` and `add`: a file is stored under its base name; with -r a
/// folder is every file under it, named `folder/sub/file` with '/' as a mount shows them (as
/// `cp -r` into a mount would store them). A folder without -r is refused at once, in one line.
enum SourceFiles {
    static let recursiveOption = OptionSpec(names: ["-r", "--recursive"], takesValue: false,
                                            help: "add folders with everything in them (names with '/', as a mount shows them)")

    static func expand(_ arguments: [String], recursive: Bool, mediaType: String? = nil) throws -> [NewDataFile] {
        var files: [NewDataFile] = []
        for argument in arguments {
            guard isFolder(argument) else {
                files.append(NewDataFile(sourcePath: argument, mediaType: mediaType))
                continue
            }
            guard recursive else {
                throw UsageError("\(PrintableText.escaped(argument)) is a folder: give -r to add it with everything in it")
            }
            // '.' and 'a/..' name the folder they mean, not the dots.
            let top = URL(fileURLWithPath: argument).standardizedFileURL.lastPathComponent
            for relative in try filesUnder(argument) {
                files.append(NewDataFile(sourcePath: argument + "/" + relative, name: top + "/" + relative, mediaType: mediaType))
            }
        }
        return files
    }

    /// A folder itself, not a symbolic link to one (those are left to the save, which refuses them).
    private static func isFolder(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// Every non-folder entry under `folder`, relative to it, sorted so that the order is the same
    /// on every run; symbolic links to folders are not followed.
    private static func filesUnder(_ folder: String) throws -> [String] {
        var found: [String] = []
        var pending = [""]
        while let relative = pending.popLast() {
            let path = relative.isEmpty ? folder : folder + "/" + relative
            // access() gives the reason (permissions) that FileManager's error hides.
            if access(path, R_OK | X_OK) != 0 { throw ContainerError.io(path: path, operation: "cannot read the folder", errno: errno) }
            let names: [String]
            do { names = try FileManager.default.contentsOfDirectory(atPath: path) } catch {
                throw ContainerError.io(path: path, operation: "cannot read the folder", errno: EIO)
            }
            for name in names {
                let child = relative.isEmpty ? name : relative + "/" + name
                if isFolder(folder + "/" + child) { pending.append(child) } else { found.append(child) }
            }
        }
        return found.sorted()
    }
}

import ASiC
import Foundation

/// The private folder beside a container where a writable mount keeps the files written into it
/// (over 64 KiB) until they are saved: `.NAME.asicfs-spool-PID-XXXXXX`.
///
/// The container's folder may be shared (/tmp, a project folder, a browse tree where the daemon
/// is root), so the folder is made with mkdtemp (a fresh name no one could plant beforehand,
/// mode 0700), and everything in it is made, moved and removed through a descriptor of it, never
/// by its path again: if another user renames it away and puts a folder of theirs in its place,
/// the daemon goes on using its own. Spool files are read back through the descriptors that
/// wrote them (`Spool`).
///
/// The PID in the name lets a later mount remove what a killed daemon left (`removeStale`), and
/// `asicfs umount` point to it; NAME is cut short when a long container name would push the
/// folder's name past NAME_MAX.
final class SpoolFolder: @unchecked Sendable {
    static let marker = ".asicfs-spool-"
    /// What the name adds to the container's: "." + marker + PID (up to 10 digits) + "-XXXXXX".
    private static let addedLength = 1 + marker.utf8.count + 10 + 7

    /// Where it was made (for messages; the folder itself is used through `descriptor`).
    let path: String
    private let descriptor: Int32
    private let identity: (device: UInt64, inode: UInt64)
    private let lock = NSLock()
    private var counter = 0

    private init(path: String, descriptor: Int32, status: stat) {
        self.path = path
        self.descriptor = descriptor
        identity = (UInt64(status.st_dev), UInt64(status.st_ino))
    }

    /// Once nothing uses it (its spools are gone), an empty folder goes too.
    deinit {
        if isStillAtPath { rmdir(path) }
        close(descriptor)
    }

    /// Makes a new private spool folder beside `container` for this process.
    static func make(forContainer container: String) throws -> SpoolFolder {
        let template = "\(namePrefix(forContainer: container, daemon: getpid()))-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard bytes.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw ContainerError.io(path: template, operation: "cannot create", errno: errno)
        }
        let made = String(decoding: bytes.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let fd = open(made, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        var st = stat()
        guard fd >= 0, fstat(fd, &st) == 0 else {
            let code = errno
            if fd >= 0 { close(fd) }
            rmdir(made)
            throw ContainerError.io(path: made, operation: "cannot open", errno: code)
        }
        return SpoolFolder(path: made, descriptor: fd, status: st)
    }

    /// `FOLDER/.NAME.asicfs-spool-PID`, which the daemon `pid`'s spool folders for `container` begin with.
    static func namePrefix(forContainer container: String, daemon pid: Int32) -> String {
        let name = PathText.shortened(PathText.lastComponent(of: container), leavingRoomFor: addedLength)
        return "\(PathText.folder(of: container))/.\(name)\(marker)\(pid)"
    }

    /// True for the names of spool folders (hidden in browse mode).
    static func isSpoolFolderName(_ name: String) -> Bool { name.hasPrefix(".") && name.contains(marker) }

    // MARK: - Files

    /// A new spool file, made through the descriptor, with a short name of its own.
    func createFile() throws -> (name: String, file: PosixFile) {
        let name = lock.withLock { () -> String in
            counter += 1
            return String(counter)
        }
        return (name, try PosixFile.createExclusive(named: name, in: descriptor, path: "\(path)/\(name)"))
    }

    func removeFile(_ name: String) { unlinkat(descriptor, name, 0) }

    /// Moves a spool file out to `target` (a rescue); false when it could not.
    func moveFile(_ name: String, to target: String) -> Bool { renameat(descriptor, name, AT_FDCWD, target) == 0 }

    // MARK: - The folder

    /// Whether `path` still names this very folder (another user may have renamed it away).
    private var isStillAtPath: Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (UInt64(st.st_dev), UInt64(st.st_ino)) == identity
    }

    /// Removes every spool file, and then the folder where its path still names it.
    func removeAll() {
        Self.removeFiles(in: descriptor)
        if isStillAtPath { rmdir(path) }
    }

    /// Renames the folder to `target` (a rescue keeps the raw spool files); false when it could not.
    func keep(as target: String) -> Bool { isStillAtPath && rename(path, target) == 0 }

    /// Renames the folder beside the container, out of the way of stale-spool cleaning, when no
    /// rescue folder could be made; returns where it went.
    func keepForRescue(forContainer container: String) -> String? {
        let target = "\(Self.rescuePrefix(forContainer: container))-spool"
        return keep(as: target) ? target : nil
    }

    // MARK: - Rescue at unmount

    private static let rescueMarker = ".asicfs-unsaved-"
    /// What a rescue folder's name adds: marker + seconds (10) + "-XXXXXX" + "-spool".
    private static let rescueAddedLength = rescueMarker.utf8.count + 10 + 7 + 6

    private static func rescuePrefix(forContainer container: String) -> String {
        let name = PathText.shortened(PathText.lastComponent(of: container), leavingRoomFor: rescueAddedLength)
        return "\(PathText.folder(of: container))/\(name)\(rescueMarker)\(Int(Date().timeIntervalSince1970))"
    }

    /// A new private folder beside `container` for the files an unmount could not save:
    /// `NAME.asicfs-unsaved-TIME-XXXXXX` (mkdtemp: no one else can have made it first).
    static func makeRescueFolder(forContainer container: String) throws -> String {
        var bytes = Array("\(rescuePrefix(forContainer: container))-XXXXXX".utf8CString)
        guard bytes.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw ContainerError.io(path: container, operation: "cannot make a folder for the unsaved files of", errno: errno)
        }
        return String(decoding: bytes.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Puts each unsaved file into `folder` (`makeRescueFolder`) under its own name: a spool
    /// file is moved there (no space needed), a small in-memory one written. Returns the names
    /// that could not be kept.
    static func rescue(_ files: [(name: String, spool: Spool)], into folder: String) -> [String] {
        var lost: [String] = []
        for (name, spool) in files {
            let target = folder + "/" + name
            try? FileManager.default.createDirectory(atPath: PathText.folder(of: target), withIntermediateDirectories: true)
            if spool.isOnDisk {
                if !spool.moveFile(to: target) { lost.append(name) }
                continue
            }
            do {
                let output = try PosixFile.createExclusive(target, mode: 0o600)
                var bytes = [UInt8](repeating: 0, count: Int(spool.size))
                let count = try bytes.withUnsafeMutableBytes { try spool.read(into: $0, at: 0) }
                try bytes.withUnsafeBytes { try output.write(UnsafeRawBufferPointer(rebasing: $0[0..<count]), at: 0) }
                try output.sync()
            } catch {
                Glibc.unlink(target)
                lost.append(name)
            }
        }
        return lost
    }

    // MARK: - What killed daemons left

    /// A daemon killed with SIGKILL leaves its spool folder behind; remove those whose process is
    /// gone (for the container named `base`, or for every container in `folder` when nil). Only
    /// our own private folders are touched (a real folder, ours, mode 0700): whatever another
    /// user made under such a name is left alone.
    static func removeStale(in folder: String, base: String?) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        let own = base.map { "." + PathText.shortened($0, leavingRoomFor: addedLength) }
        for name in names where isSpoolFolderName(name) {
            guard let marker = name.range(of: marker, options: .backwards),
                  own.map({ name[..<marker.lowerBound] == $0 }) ?? true,
                  let pid = Int32(name[marker.upperBound...].prefix { $0 != "-" }),
                  kill(pid, 0) != 0 && errno == ESRCH else { continue }
            removeOwnFolder("\(folder)/\(name)")
        }
    }

    /// The folders the daemon `pid` left for `container` (ours only, as above).
    static func leftBehind(forContainer container: String, daemon pid: Int32) -> [String] {
        let prefix = namePrefix(forContainer: container, daemon: pid)
        let folder = PathText.folder(of: container)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.map { "\(folder)/\($0)" }
            .filter { ($0 == prefix || $0.hasPrefix(prefix + "-")) && openOwnFolder($0).map { close($0) } != nil }
    }

    /// A descriptor of `path` when it is a real folder of ours with no permission bits for others.
    private static func openOwnFolder(_ path: String) -> Int32? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_uid == geteuid(), st.st_mode & 0o077 == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    private static func removeOwnFolder(_ path: String) {
        guard let fd = openOwnFolder(path) else { return }
        removeFiles(in: fd)
        close(fd)
        rmdir(path)
    }

    /// Unlinks the files in the folder open as `fd` (a spool folder holds files only).
    private static func removeFiles(in fd: Int32) {
        let listing = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard listing >= 0, let directory = fdopendir(listing) else {
            if listing >= 0 { close(listing) }
            return
        }
        defer { closedir(directory) }
        rewinddir(directory)  // the copy shares its position with `fd`, which an earlier listing moved
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { names.append(name) }
        }
        for name in names { unlinkat(fd, name, 0) }
    }
}

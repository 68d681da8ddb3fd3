import CDOC
import Foundation
import Glibc

/// Where `asicfs decrypt -d DIR` puts the files: first into a private folder (mode 0700) inside
/// DIR, then, only after the container has given every file and all of it authenticated, each
/// file is linked to its name in DIR (link(2) never replaces a name) and the private folder
/// removed. A failure at any point leaves DIR as it was. Files are created mode 0600: what
/// they hold was encrypted for one person.
final class DecryptedFilesFolder: PlainFileSink {
    let folder: String
    private var staging: String?
    private var names: [String] = []
    private var current: Int32 = -1

    init(folder: String) { self.folder = folder }

    func prepare() throws {
        var status = stat()
        if stat(folder, &status) != 0 {
            guard errno == ENOENT, mkdir(folder, 0o755) == 0 else { throw failure("cannot create the folder", folder) }
        } else if status.st_mode & S_IFMT != S_IFDIR {
            throw CDOCError(.io, "\(folder) is not a folder")
        }
        var template = Array("\(folder)/.asicfs-decrypt-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw failure("cannot write into the folder", folder)
        }
        staging = String(cString: made)
    }

    func begin(name: String, size: Int64?) throws {
        guard let staging else { throw CDOCError(.io, "the output folder is not prepared") }
        // The format checked the name already (SafeFileName); this is the second lock on the door.
        try SafeFileName.check(name)
        current = open("\(staging)/\(name)", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard current >= 0 else { throw failure("cannot create", name) }
        names.append(name)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(current, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw failure("cannot write", names.last ?? "") }
            offset += written
        }
    }

    func end() throws {
        defer { current = -1 }
        guard fsync(current) == 0, close(current) == 0 else { throw failure("cannot write", names.last ?? "") }
    }

    /// Moves every file into the folder; refuses (and undoes) when a name is taken there.
    func commit() throws -> [String] {
        guard let staging else { return [] }
        if let taken = names.first(where: { access("\(folder)/\($0)", F_OK) == 0 || isLink("\(folder)/\($0)") }) {
            abandon()
            throw CDOCError(.io, "\(folder)/\(taken) exists already; nothing was written (decrypt into an empty folder with -d)")
        }
        var placed: [String] = []
        for name in names {
            guard link("\(staging)/\(name)", "\(folder)/\(name)") == 0 else {
                let error = failure("cannot place", "\(folder)/\(name)")
                for done in placed { unlink("\(folder)/\(done)") }
                abandon()
                throw error
            }
            placed.append(name)
        }
        abandon()
        return placed.map { "\(folder)/\($0)" }
    }

    /// Drops everything written so far.
    func abandon() {
        if current >= 0 { close(current); current = -1 }
        guard let staging else { return }
        for name in names { unlink("\(staging)/\(name)") }
        rmdir(staging)
        self.staging = nil
    }

    private func isLink(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    private func failure(_ what: String, _ path: String) -> CDOCError {
        CDOCError(.io, "\(what) \(path): \(String(cString: strerror(errno)))")
    }
}

/// A file to encrypt, read from its descriptor front to back.
final class PlainFileFromDisk: PlainFileSource {
    let name: String
    let size: Int64
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CDOCError(.io, "cannot read \(path): \(String(cString: strerror(errno)))") }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw CDOCError(.io, "\(path) is not a regular file")
        }
        size = Int64(status.st_size)
        name = URL(fileURLWithPath: path).lastPathComponent
    }

    deinit { close(descriptor) }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw CDOCError(.io, "cannot read \(name): \(String(cString: strerror(errno)))") }
            return count
        }
    }
}

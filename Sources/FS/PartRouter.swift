import Foundation

/// The one router of a mount made of parts: `.asicfs/…` goes to the control part, every other
/// path to the files part, each getting the name inside it; one handle table says which part
/// opened each file. A container (`MountRouter`), an encrypted container (`EncryptedMount`) and
/// a folder being sealed into one (`SealingMount`) differ only in their parts and in what
/// sync, times and close mean, so they share this and the forwarding in `RoutedMount`.
final class PartRouter: @unchecked Sendable {
    let control: any MountPart
    let files: any MountPart
    /// Open files: which part opened each, and that part's own open file. `lock` is a leaf.
    private let lock = NSLock()
    private var handles: [UInt64: (part: any MountPart, file: AnyObject)] = [:]
    private var nextHandle: UInt64 = 1

    init(control: any MountPart, files: any MountPart) {
        self.control = control
        self.files = files
    }

    /// The part a mount path belongs to, and the name inside that part.
    func route(_ path: String) -> (part: any MountPart, name: String) {
        let name = DataFiles.name(of: path)
        if let inner = ControlFolder.inner(name) { return (control, inner) }
        return (files, name)
    }

    func register(_ part: any MountPart, _ opened: PartOpened) -> MountOpenResult {
        let id = lock.withLock { () -> UInt64 in
            defer { nextHandle += 1 }
            handles[nextHandle] = (part, opened.file)
            return nextHandle
        }
        return MountOpenResult(handle: id, keepCache: opened.keepCache, directIO: opened.directIO)
    }

    func openFile(_ handle: UInt64) -> (part: any MountPart, file: AnyObject)? { lock.withLock { handles[handle] } }

    func opened(_ handle: UInt64) throws -> (part: any MountPart, file: AnyObject) {
        guard let found = openFile(handle) else { throw FileSystemError(EBADF) }
        return found
    }

    func remove(_ handle: UInt64) -> (part: any MountPart, file: AnyObject)? {
        lock.withLock { handles.removeValue(forKey: handle) }
    }

    /// Forgets every open file (the mount is closing).
    func removeAll() { lock.withLock { handles.removeAll() } }
}

/// A mount made of a control part and a files part behind a `PartRouter`: the operations that
/// only forward to the part a path or handle belongs to.
protocol RoutedMount: MountSource {
    var parts: PartRouter { get }
}

extension RoutedMount {
    func attributes(_ path: String) throws -> NodeAttributes {
        let (part, name) = parts.route(path)
        return try part.attributes(name)
    }

    func attributes(handle: UInt64) throws -> NodeAttributes {
        let (part, file) = try parts.opened(handle)
        return try part.attributes(of: file)
    }

    /// The files part's top lists the control folder first.
    func list(_ path: String) throws -> [String] {
        let (part, name) = parts.route(path)
        let names = try part.list(name)
        return part === parts.files && name.isEmpty ? [ControlFolder.name] + names : names
    }

    func listWithAttributes(_ path: String) throws -> [(String, NodeAttributes)] {
        let prefix = path.hasSuffix("/") ? path : path + "/"
        return try list(path).compactMap { name in (try? attributes(prefix + name)).map { (name, $0) } }
    }

    func open(_ path: String, flags: Int32) throws -> MountOpenResult {
        let (part, name) = parts.route(path)
        return parts.register(part, try part.open(name, flags: flags))
    }

    func create(_ path: String, flags: Int32, mode: mode_t) throws -> MountOpenResult {
        let (part, name) = parts.route(path)
        return parts.register(part, try part.create(name, writeOnly: flags & O_ACCMODE == O_WRONLY))
    }

    func read(_ handle: UInt64, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64,
              stop: () -> Int32?) throws -> Int {
        let (part, file) = try parts.opened(handle)
        return try part.read(file, into: buffer, at: offset, stop: stop)
    }

    func write(_ handle: UInt64, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        let (part, file) = try parts.opened(handle)
        return try part.write(file, buffer, at: offset)
    }

    func truncate(_ path: String?, to length: Int64, handle: UInt64?) throws {
        let open = handle.flatMap { parts.openFile($0) }
        guard let path else {
            guard let open else { throw FileSystemError(EBADF) }
            return try open.part.truncate(nil, to: length, file: open.file)
        }
        let (part, name) = parts.route(path)
        try part.truncate(name, to: length, file: open.flatMap { $0.part === part ? $0.file : nil })
    }

    func release(_ handle: UInt64) {
        guard let (part, file) = parts.remove(handle) else { return }
        part.release(file)
    }

    func unlink(_ path: String) throws {
        let (part, name) = parts.route(path)
        try part.unlink(name)
    }

    func makeFolder(_ path: String, mode: mode_t) throws {
        let (part, name) = parts.route(path)
        try part.makeFolder(name)
    }

    func removeFolder(_ path: String) throws {
        let (part, name) = parts.route(path)
        try part.removeFolder(name)
    }

    /// Within one part only: between the files and the control folder, EXDEV.
    func rename(_ from: String, to: String, flags: RenameFlags) throws {
        let (fromPart, fromName) = parts.route(from), (toPart, toName) = parts.route(to)
        guard fromPart === toPart else { throw FileSystemError(EXDEV) }
        try fromPart.rename(fromName, to: toName, flags: flags)
    }
}

/// A read of a file the control folders generate in memory: the part of `bytes` at `offset`.
func copyGenerated(_ bytes: [UInt8], into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
    guard offset < bytes.count else { return 0 }
    let count = min(buffer.count, bytes.count - Int(offset))
    bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + count])) }
    return count
}

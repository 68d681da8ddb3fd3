import Foundation
import Signing

/// The control folder as a part of the mount: opening, reading and writing its files, and
/// refusing every change to its tree (nothing here can be removed, renamed or made).
extension ControlFolder: MountPart {
    /// An open control file: generated content, a request being written, or a blocking read.
    final class OpenFile {
        enum Source {
            case control(ControlFile, [UInt8])
            /// `sign/<method>` opened for writing: the request written, taken at its close.
            case signRequest(SignRequest)
            /// `signatures/<n>-<NAME>/remove` opened for writing, in the listing of `generation`;
            /// reading shows `usage`.
            case removeRequest(folder: String, generation: UInt64, usage: [UInt8])
            case wait(BlockingRead)
            /// `status/<method>`, whose first read may wait for the verification code.
            case methodStatus(SigningMethod, BlockingRead)
        }
        let source: Source
        init(_ source: Source) { self.source = source }
    }

    /// What one reader of a control file whose first read may block (`status/wait`,
    /// `status/<method>`) got: the text, captured by that read, and whether it reports a failure
    /// (then the read after the text fails with EIO).
    final class BlockingRead: @unchecked Sendable {
        private let lock = NSLock()
        private var captured: (bytes: [UInt8], failed: Bool)?

        func result(_ produce: () throws -> (bytes: [UInt8], failed: Bool)) rethrows -> (bytes: [UInt8], failed: Bool) {
            if let done = lock.withLock({ captured }) { return done }
            let made = try produce()
            return lock.withLock {
                if captured == nil { captured = made }
                return captured!
            }
        }
    }

    private static func open(_ file: AnyObject) throws -> OpenFile {
        guard let file = file as? OpenFile else { throw FileSystemError(EBADF) }
        return file
    }

    /// Every file is generated at its open and never cached (direct_io).
    private static func opened(_ source: OpenFile.Source) -> PartOpened {
        PartOpened(file: OpenFile(source), keepCache: false, directIO: true)
    }

    func open(_ name: String, flags: Int32) throws -> PartOpened {
        let wantsWrite = flags & O_ACCMODE != O_RDONLY || flags & O_TRUNC != 0
        let file = try file(name)
        switch file {
        case .sign(let method) where wantsWrite:
            if files.readOnly { throw FileSystemError(EROFS) }
            return Self.opened(.signRequest(SignRequest(method: method)))
        case .signature(_, .remove) where wantsWrite:
            if files.readOnly { throw FileSystemError(EROFS) }
            let (folder, generation) = signatureFolder(of: name)
            return Self.opened(.removeRequest(folder: folder, generation: generation, usage: content(file)))
        case _ where wantsWrite: throw FileSystemError(EACCES)
        case .wait: return Self.opened(.wait(BlockingRead()))
        // O_NONBLOCK: the text as it is now, without waiting for a verification code.
        case .methodStatus(let method) where flags & O_NONBLOCK == 0: return Self.opened(.methodStatus(method, BlockingRead()))
        default: return Self.opened(.control(file, content(file)))
        }
    }

    func attributes(of file: AnyObject) throws -> NodeAttributes {
        let size: Int
        if case .control(_, let bytes) = try Self.open(file).source { size = bytes.count } else { size = 0 }
        return NodeAttributes(kind: .file, size: Int64(size), permissions: 0o444, modified: files.mountedAt)
    }

    /// Reads an open control file. `status/wait` and `status/<method>` may block: `stop` ends
    /// the wait (the reader was interrupted, or the mount is going away).
    func read(_ file: AnyObject, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64,
              stop: () -> Int32?) throws -> Int {
        switch try Self.open(file).source {
        case .control(_, let bytes): return copyGenerated(bytes, into: buffer, at: offset)
        case .signRequest(let request): return copyGenerated(Array(request.method.usage.utf8), into: buffer, at: offset)
        case .removeRequest(_, _, let usage): return copyGenerated(usage, into: buffer, at: offset)
        case .wait(let state):
            let (bytes, failed) = try state.result {
                let outcome = try signing.waitForOutcome(stop: stop)
                let line = outcome?.line ?? "idle: no signing has run"
                if case .failed? = outcome { return (Array((line + "\n").utf8), true) }
                return (Array((line + "\n").utf8), false)
            }
            // After a failure's line, an error: `cat` prints the line and exits non-zero.
            if offset >= bytes.count && failed { throw FileSystemError(EIO) }
            return copyGenerated(bytes, into: buffer, at: offset)
        case .methodStatus(let method, let state):
            let (bytes, _) = try state.result { (Array(try signing.waitForStatus(of: method, stop: stop).utf8), false) }
            return copyGenerated(bytes, into: buffer, at: offset)
        }
    }

    /// A write to a request file: checked at once (EINVAL, EBUSY), taken at its close.
    func write(_ file: AnyObject, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        switch try Self.open(file).source {
        case .signRequest(let request): try signing.write(request, buffer, at: offset)
        case .removeRequest(let folder, let generation, _): try removeSignature(buffer, folder: folder, ifStill: generation)
        default: throw FileSystemError(EBADF)
        }
        return buffer.count
    }

    /// `echo … > sign/<method>` truncates first; a request file holds nothing to cut.
    func truncate(_ name: String?, to length: Int64, file: AnyObject?) throws {
        guard let name else { throw FileSystemError(EBADF) }  // ftruncate: nothing here holds bytes to cut
        if try self.file(name).isRequest { return }
        throw FileSystemError(EACCES)
    }

    /// The last close: a sign request starts its signing now (outside every lock of the mount:
    /// starting commits pending changes).
    func release(_ file: AnyObject) {
        if let open = file as? OpenFile, case .signRequest(let request) = open.source { signing.take(request) }
    }

    // Nothing here can be removed (see `refuseRemoval`), made or renamed.
    func unlink(_ name: String) throws { try refuseRemoval(name) }
    func removeFolder(_ name: String) throws { try refuseRemoval(name) }

    /// `rm` of an open control file comes as a rename to `.fuse_hidden…`: a removal, refused.
    func rename(_ from: String, to: String, flags: RenameFlags) throws {
        if DataFiles.isRemovedWhileOpenName(to), flags.isEmpty { try refuseRemoval(from) }
        throw FileSystemError(EXDEV)
    }
}

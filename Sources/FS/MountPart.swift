import Foundation

/// One part of a container's mount: its data files (`DataFiles`) or its control folder
/// (`ControlFolder`). The `MountRouter` hands each part the paths below it, as names inside it
/// ("" is the part's top, no leading `/`), and keeps the handle table: a part's `open` returns
/// an open file of its own, which the router hands back to that part's `read`, `write`,
/// `truncate` and `release`. What a part does not support answers as below (EPERM, EACCES,
/// EBADF, EXDEV), so a part has only the operations it has, and each can be driven from a test
/// without FUSE.
protocol MountPart: AnyObject, Sendable {
    func attributes(_ name: String) throws -> NodeAttributes
    /// fstat of an open file that may have no name any more.
    func attributes(of file: AnyObject) throws -> NodeAttributes
    func list(_ name: String) throws -> [String]

    func open(_ name: String, flags: Int32) throws -> PartOpened
    /// A new file, open for writing (`writeOnly`: O_WRONLY, no reads).
    func create(_ name: String, writeOnly: Bool) throws -> PartOpened
    /// `stop` is asked while a read blocks: an errno from it ends the wait.
    func read(_ file: AnyObject, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64,
              stop: () -> Int32?) throws -> Int
    func write(_ file: AnyObject, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> Int
    /// By name, or through an open file (`name` nil: a file removed while open).
    func truncate(_ name: String?, to length: Int64, file: AnyObject?) throws
    /// The last close of an open file.
    func release(_ file: AnyObject)

    func unlink(_ name: String) throws
    func makeFolder(_ name: String) throws
    func removeFolder(_ name: String) throws
    /// Both names inside this part (the router refuses a rename between parts).
    func rename(_ from: String, to: String, flags: RenameFlags) throws
    /// A new modification time (nil: now).
    func setModified(_ name: String, to date: Date?) throws
}

/// What a part opened, and how the kernel is to cache it (see `MountOpenResult`).
struct PartOpened {
    let file: AnyObject
    let keepCache: Bool
    let directIO: Bool
}

/// What a part without these operations answers.
extension MountPart {
    func create(_ name: String, writeOnly: Bool) throws -> PartOpened { throw FileSystemError(EACCES) }
    func write(_ file: AnyObject, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        throw FileSystemError(EBADF)
    }
    func unlink(_ name: String) throws { throw FileSystemError(EPERM) }
    func makeFolder(_ name: String) throws { throw FileSystemError(EPERM) }
    func removeFolder(_ name: String) throws { throw FileSystemError(EPERM) }
    func rename(_ from: String, to: String, flags: RenameFlags) throws { throw FileSystemError(EXDEV) }
    /// Times that are not kept are accepted and forgotten (`touch`, `cp -a`).
    func setModified(_ name: String, to date: Date?) throws {}
}

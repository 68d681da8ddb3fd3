import ASiC
import Foundation

/// What a claim asks of the data files it holds still (`DataFiles`).
protocol ClaimableFiles: AnyObject, Sendable {
    var containerPath: String { get }
    var dataFileCount: Int { get }
    /// A data file still open for writing, if any: a signing cannot start until it is closed.
    var fileOpenForWriting: String? { get }
    /// Pending changes committed, the snapshot a signing signs (refused while a change cannot be saved).
    func snapshotForSigning() throws -> Container
    /// The mount shows `container` from now on.
    func adopt(_ container: Container)
    /// A message naming the container through its held folder.
    func shown(_ text: String) -> String
}

/// Who holds the mount now: a signing or a signature removal `claim`s it, and until it
/// `release`s it (adopting the new container, or not) data files cannot change and nothing else
/// can claim it (EBUSY). What the `SigningCoordinator` holds instead of the whole file system:
/// the claim, the snapshot to sign, the adoption of the result, and the error record.
///
/// `lock` is a leaf: `DataFiles` reads `activity` under its own lock, never the other way.
final class MountClaim: @unchecked Sendable {
    let readOnly: Bool
    let errors: LastError
    private let lock = NSLock()
    private var holder: String?
    private weak var files: (any ClaimableFiles)?

    init(readOnly: Bool, errors: LastError) {
        self.readOnly = readOnly
        self.errors = errors
    }

    /// The data files this claim holds still (set once, when they are made).
    func attach(_ files: any ClaimableFiles) { self.files = files }

    /// What holds the mount now ("a pkcs12 signing is running"), if anything.
    var activity: String? { lock.withLock { holder } }

    /// Holds the mount for `activity`; refused (EROFS, EBUSY) on a read-only mount or while held.
    func claim(_ activity: String, for action: String) throws {
        try lock.withLock {
            if readOnly { throw errors.failure(EROFS, "cannot \(action): the container is mounted read-only (-o ro)") }
            if let holder { throw errors.failure(EBUSY, "cannot \(action): \(holder)") }
            holder = activity
        }
    }

    /// The snapshot to sign (the caller holds the claim).
    func snapshot() throws -> Container {
        guard let files else { throw FileSystemError(EIO, "the mount is closed") }
        return try files.snapshotForSigning()
    }

    /// Ends the claim; with a container, the mount shows it first (so nothing can change the
    /// old snapshot in between).
    func release(adopting container: Container?) {
        if let container { files?.adopt(container) }
        lock.withLock { holder = nil }
    }

    // MARK: - What a signing reads and reports

    var containerPath: String { files?.containerPath ?? "" }
    var dataFileCount: Int { files?.dataFileCount ?? 0 }
    var fileOpenForWriting: String? { files?.fileOpenForWriting }
    func shown(_ text: String) -> String { files?.shown(text) ?? text }
    func recordError(_ message: String) { errors.record(message) }
    func failure(_ code: Int32, _ message: String) -> FileSystemError { errors.failure(code, message) }
}

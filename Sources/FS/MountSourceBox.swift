import Foundation

/// Keeps the source alive for libfuse, which gets an untyped pointer (`private_data`), behind
/// the gate that holds requests while a container is checked (see `MountGate`), and
/// the listings of open folders: a listing is made once per opendir (and rewind) and handed
/// out in pieces by offset, so that READDIRPLUS carries the attributes (libfuse passes them
/// to the kernel only for entries filled with offsets; a listing filled all at once makes the
/// kernel send one LOOKUP per name after it).
final class MountSourceBox: @unchecked Sendable {
    let gate: MountGate
    /// The root folder's attributes while the check runs: a folder, writable unless the mount
    /// is read-only, with the container file's time. The check's own (a signed container's
    /// root is not writable, and shows its newest file's time) replace them when it ends: the
    /// kernel is then told to drop what it cached.
    let provisionalRoot: NodeAttributes
    private let lock = NSLock()
    private var listings: [UInt64: Listing] = [:]
    private var nextListing: UInt64 = 1

    struct Listing {
        var entries: [(name: String, attributes: NodeAttributes?)]
        var withAttributes: Bool
    }

    init(gate: MountGate, provisionalRoot: NodeAttributes) {
        self.gate = gate
        self.provisionalRoot = provisionalRoot
    }

    /// The checked source (waits for the check; EIO when it failed).
    var source: any MountSource { get throws { try gate.source() } }

    func openListing() -> UInt64 {
        lock.withLock {
            defer { nextListing += 1 }
            listings[nextListing] = Listing(entries: [], withAttributes: false)
            return nextListing
        }
    }

    func closeListing(_ id: UInt64) { lock.withLock { listings[id] = nil } }

    /// The entries of an open folder ("." and ".." first); made again at offset 0 (rewinddir).
    func listing(_ id: UInt64, path: String, offset: Int, withAttributes: Bool) throws -> [(name: String, attributes: NodeAttributes?)] {
        if offset > 0, let listing = lock.withLock({ listings[id] }), listing.withAttributes || !withAttributes,
           !listing.entries.isEmpty {
            return listing.entries
        }
        let entries: [(name: String, attributes: NodeAttributes?)] = withAttributes
            ? try source.listWithAttributes(path).map { ($0.0, $0.1) }
            : try source.list(path).map { ($0, nil) }
        let all = [(".", nil), ("..", nil)] + entries
        lock.withLock { if listings[id] != nil { listings[id] = Listing(entries: all, withAttributes: withAttributes) } }
        return all
    }
}

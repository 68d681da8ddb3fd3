import Foundation

/// The one CRC-32 check of an entry that its random reads add up to, and what it found. Every
/// read path must verify what it serves or fail: once all bytes have been delivered (in any
/// order) their CRC is compared with the archive's, and once the entry is known to be damaged
/// (a wrong CRC, a corrupt stream, a wrong length) every later read of it fails with that error.
final class EntryIntegrity: @unchecked Sendable {
    private let lock = NSLock()
    private let location: EntryLocation
    private var coverage: CRCCoverage
    private var verified = false
    private var damage: ContainerError?

    init(_ location: EntryLocation) {
        self.location = location
        coverage = CRCCoverage(size: location.uncompressedSize)
    }

    /// Every byte was delivered and the CRC matched: nothing more to check.
    var isVerified: Bool { lock.withLock { verified } }

    /// Throws the damage found earlier, if any.
    func checkUsable() throws {
        if let damage = lock.withLock({ damage }) { throw damage }
    }

    /// Remembers `error` if it says the data is damaged (not for I/O errors, which may pass), and rethrows it.
    func fail(_ error: Error) -> Error {
        guard let found = error as? ContainerError, case .dataMismatch = found else { return error }
        lock.withLock { if damage == nil { damage = found } }
        return found
    }

    /// Adds delivered bytes (`crc`, if given, is theirs, computed outside any lock); throws
    /// when it was found damaged before. `check()` then compares the CRC once all are there.
    func record(_ bytes: UnsafeRawBufferPointer, at offset: Int64, crc: UInt32? = nil) throws {
        try lock.withLock {
            if let damage { throw damage }
            if verified || coverage.covers(offset, count: bytes.count) { return }
            coverage.record(bytes, at: offset, crc: crc)
        }
    }

    /// Once every byte was delivered: throws if the CRC-32 is wrong (and remembers that).
    func check() throws {
        try lock.withLock {
            if let damage { throw damage }
            if !verified { try checkIfComplete() }
        }
    }

    /// What has not been delivered yet (a reader at the end fills these to finish the check).
    var gaps: [Range<Int64>] { lock.withLock { verified ? [] : coverage.gaps } }

    private func checkIfComplete() throws {
        guard let whole = coverage.crcOfWhole else { return }
        if whole == location.crc32 {
            verified = true
            return
        }
        let found = ContainerError.dataMismatch(location.name, reason: "CRC-32 mismatch")
        damage = found
        throw found
    }
}

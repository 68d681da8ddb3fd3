import Foundation
import Signing

/// The text written to one open `.asicfs/decrypt/<method>`: collected over its writes, checked at
/// each, taken when the file is closed (as `SignRequest` for signing).
final class DecryptRequest: @unchecked Sendable {
    let method: DecryptionMethod
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    private var _refused = false

    init(method: DecryptionMethod) { self.method = method }

    var refused: Bool {
        get { lock.withLock { _refused } }
        set { lock.withLock { _refused = newValue } }
    }

    /// Adds one write (in order, from the start) and returns the text so far (nil: not UTF-8).
    func append(_ buffer: UnsafeRawBufferPointer, at offset: Int64) throws -> String? {
        try lock.withLock {
            guard offset == Int64(bytes.count) else {
                throw FileSystemError(EINVAL, "decrypt/\(method.rawValue): a request is written from its start, in order")
            }
            bytes += buffer
            return String(validating: bytes, as: UTF8.self)
        }
    }

    var text: String? { lock.withLock { String(validating: bytes, as: UTF8.self) } }
}

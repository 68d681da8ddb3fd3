/// Receives the decrypted files one after another, streaming (files may be large). A format
/// calls `abandon()` when anything fails after the first `begin`, including an authentication
/// tag that fails at the very end: the sink must then drop everything it was given, so a failed
/// decryption leaves nothing behind.
public protocol PlainFileSink: AnyObject {
    /// `name` has passed `SafeFileName` already. `size` when the format knows it in advance.
    func begin(name: String, size: Int64?) throws
    func write(_ bytes: UnsafeRawBufferPointer) throws
    func end() throws
    func abandon()
}

/// A file to encrypt, read once, front to back.
public protocol PlainFileSource: AnyObject {
    var name: String { get }
    var size: Int64 { get }
    /// Fills `buffer` from the current position; 0 at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

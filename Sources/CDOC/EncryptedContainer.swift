import Glibc
import Crypto

/// An encrypted container opened for reading: its format and recipients are known without a key.
public protocol EncryptedContainerReader: AnyObject {
    var format: EncryptedFormat { get }
    var recipients: [Recipient] { get }
    /// Names and sizes listed before decryption (CDOC 1.x `orig_file` properties); may be empty.
    var listedFiles: [(name: String, size: Int64?)] { get }
    /// Chooses the recipient `unlocker` opens (several matching: `CDOCError.severalRecipients`),
    /// decrypts and hands every file to `sink`. Any failure throws and calls `sink.abandon()`.
    func decrypt(with unlocker: Unlocker, into sink: PlainFileSink) throws
}

/// Writes a new container. Nothing of it exists under its name until it is complete (the caller
/// writes to a descriptor of a private temporary file and renames).
public protocol EncryptedContainerWriter {
    func write(files: [PlainFileSource], for recipients: [RecipientSpec], to descriptor: Int32) throws
}

public enum EncryptedContainer {
    /// Opens an encrypted container read from `descriptor` (kept open by the caller), by content.
    public static func open(descriptor: Int32) throws -> EncryptedContainerReader {
        var prefix = [UInt8](repeating: 0, count: 64)
        let count = prefix.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw CDOCError(.notEncrypted, "the file is empty or cannot be read") }
        switch EncryptedFormat.family(ofPrefix: Array(prefix[..<count])) {
        case .cdoc2: return try CDOC2Reader(descriptor: descriptor)
        case .xml: return try CDOC1Reader(descriptor: descriptor)
        case nil: throw CDOCError(.notEncrypted, "not an encrypted container (neither CDOC2 nor CDOC 1.x)")
        }
    }

    /// The writer of `format`.
    public static func writer(for format: EncryptedFormat) -> EncryptedContainerWriter {
        switch format {
        case .cdoc10, .cdoc11: CDOC1Writer(format: format)
        case .cdoc2: CDOC2Writer()
        }
    }
}

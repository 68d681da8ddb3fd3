// PLACEHOLDER (cdocbase): the cdoc1 branch replaces this file.
public final class CDOC1Reader: EncryptedContainerReader {
    public init(descriptor: Int32) throws { throw CDOCError(.unsupported, "CDOC 1.x is not implemented yet") }
    public var format: EncryptedFormat { .cdoc11 }
    public var recipients: [Recipient] { [] }
    public var listedFiles: [(name: String, size: Int64?)] { [] }
    public func decrypt(with unlocker: Unlocker, into sink: PlainFileSink) throws {}
}

public struct CDOC1Writer: EncryptedContainerWriter {
    public init(format: EncryptedFormat) {}
    public func write(files: [PlainFileSource], for recipients: [RecipientSpec], to descriptor: Int32) throws {
        throw CDOCError(.unsupported, "CDOC 1.x is not implemented yet")
    }
}

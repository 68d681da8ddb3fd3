// PLACEHOLDER (cdocbase): the cdoc2 branch replaces this file.
public final class CDOC2Reader: EncryptedContainerReader {
    public init(descriptor: Int32) throws { throw CDOCError(.unsupported, "CDOC2 is not implemented yet") }
    public var format: EncryptedFormat { .cdoc2 }
    public var recipients: [Recipient] { [] }
    public var listedFiles: [(name: String, size: Int64?)] { [] }
    public func decrypt(with unlocker: Unlocker, into sink: PlainFileSink) throws {}
}

public struct CDOC2Writer: EncryptedContainerWriter {
    public init() {}
    public func write(files: [PlainFileSource], for recipients: [RecipientSpec], to descriptor: Int32) throws {
        throw CDOCError(.unsupported, "CDOC2 is not implemented yet")
    }
}

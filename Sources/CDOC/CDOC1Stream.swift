import Glibc
import SafeXML

/// One pass over a CDOC 1.x file from its descriptor, 1 MiB at a time: the XML without the
/// payload becomes a document, the payload's base64 text is decoded as it arrives and the bytes
/// go to `payload`. Memory stays bounded by the piece size, whatever the file's size.
enum CDOC1Stream {
    static let pieceSize = 1 << 20

    static func read(_ descriptor: Int32, payload: @escaping (UnsafeRawBufferPointer) throws -> Void) throws -> (SafeXMLDocument, Int64) {
        try read(payload: payload) { parser in
            var piece = [UInt8](repeating: 0, count: pieceSize)
            var offset: off_t = 0
            while true {
                let count = piece.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { throw CDOCError(.io, "cannot read the file: \(String(cString: strerror(errno)))") }
                if count == 0 { return }
                try piece.withUnsafeBytes { try parser.feed(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                offset += off_t(count)
            }
        }
    }

    /// The same over pieces `feed` gives the parser (tests cut them anywhere).
    static func read(payload: @escaping (UnsafeRawBufferPointer) throws -> Void,
                     feed: (SafeXMLStreamParser) throws -> Void) throws -> (SafeXMLDocument, Int64) {
        var decoder = CDOC1Base64Decoder()
        let parser = SafeXMLStreamParser(name: "cdoc", divertedPath: CDOC1Document.payloadPath, largeText: true) { text in
            do { try decoder.take(text, output: payload) } catch is CDOC1Base64Decoder.NotBase64 {
                throw CDOCError(.malformed, "the encrypted payload is not base64")
            }
        }
        let document: SafeXMLDocument
        do {
            try feed(parser)
            document = try parser.finish()
        } catch let error as XMLError {
            throw CDOCError(.malformed, "not a readable CDOC 1.x document: \(error.reason)")
        }
        do { try decoder.finish(output: payload) } catch is CDOC1Base64Decoder.NotBase64 {
            throw CDOCError(.malformed, "the encrypted payload is not base64")
        }
        return (document, decoder.count)
    }
}

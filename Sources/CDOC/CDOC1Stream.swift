import Glibc
import SafeXML

/// One pass over a CDOC 1.x file from its descriptor, 1 MiB at a time: the XML without the
/// payload becomes a document; the payload's base64 text goes straight from the file's pieces to
/// the decoder (libxml2 sees only the markup around it; `SafeXMLStreamParser`'s literal text),
/// and the decoded bytes to `payload`. Opening without a key (`payload` nil) skips the text
/// (to the next `<`) without decoding it: decryption reads it again and checks every byte.
/// Memory stays bounded by the piece size, whatever the file's size.
enum CDOC1Stream {
    static let pieceSize = 1 << 20

    /// The document, and the payload's decoded length (nil when it was skipped).
    static func read(_ descriptor: Int32, payload: ((UnsafeRawBufferPointer) throws -> Void)?) throws -> (SafeXMLDocument, Int64?) {
        try read(payload: payload) { parser in
            try readPieces(descriptor) { try parser.feed($0) }
        }
    }

    /// Hands the file from `descriptor` to `body` in pieces of `pieceSize`.
    static func readPieces(_ descriptor: Int32, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: pieceSize, alignment: 16)
        defer { piece.deallocate() }
        var offset: off_t = 0
        while true {
            let count = pread(descriptor, piece.baseAddress, piece.count, offset)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw CDOCError(.io, "cannot read the file: \(String(cString: strerror(errno)))") }
            if count == 0 { return }
            try body(UnsafeRawBufferPointer(rebasing: piece[..<count]))
            offset += off_t(count)
        }
    }

    /// The same over pieces `feed` gives the parser (tests cut them anywhere).
    static func read(payload: ((UnsafeRawBufferPointer) throws -> Void)?,
                     feed: (SafeXMLStreamParser) throws -> Void) throws -> (SafeXMLDocument, Int64?) {
        let decoder = CDOC1Base64Decoder()
        let notBase64 = CDOCError(.malformed, "the encrypted payload is not base64")
        let parser: SafeXMLStreamParser
        if let payload {
            parser = SafeXMLStreamParser(name: "cdoc", divertedPath: CDOC1Document.payloadPath, largeText: true, literalText: { text in
                do { return try decoder.takePrefix(text, output: payload) } catch is CDOC1Base64Decoder.NotBase64 { throw notBase64 }
            }, text: { text in
                do { try decoder.take(text, output: payload) } catch is CDOC1Base64Decoder.NotBase64 { throw notBase64 }
            })
        } else {
            parser = SafeXMLStreamParser(name: "cdoc", divertedPath: CDOC1Document.payloadPath, largeText: true,
                                         literalText: skipText, text: { _ in })
        }
        let document: SafeXMLDocument
        do {
            try feed(parser)
            document = try parser.finish()
        } catch let error as XMLError {
            throw CDOCError(.malformed, "not a readable CDOC 1.x document: \(error.reason)")
        }
        guard let payload else { return (document, nil) }
        do { try decoder.finish(output: payload) } catch is CDOC1Base64Decoder.NotBase64 { throw notBase64 }
        return (document, decoder.count)
    }

    /// Text up to the next `<` or `&` (markup or a reference, which the parser reads).
    static func skipText(_ text: UnsafeRawBufferPointer) -> Int {
        guard let base = text.baseAddress else { return 0 }
        let markup = memchr(base, 0x3C, text.count).map { base.distance(to: UnsafeRawPointer($0)) } ?? text.count
        return memchr(base, 0x26, markup).map { base.distance(to: UnsafeRawPointer($0)) } ?? markup
    }
}

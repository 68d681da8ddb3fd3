import SafeXML

/// A DDOC 1.3 `SignedDoc` (the wrapper of several files in a CDOC 1.x payload) parsed as its
/// decrypted bytes arrive: each `DataFile` becomes one file of `sink`, its EMBEDDED_BASE64
/// content decoded on the way (straight from the bytes where it is plain base64, as the payload
/// itself is: `SafeXMLStreamParser`'s literal text), so memory stays bounded whatever the size.
/// Every name is checked (`SafeFileName`, no repeats) before its file begins; any failure
/// throws, and the caller makes the sink drop what it got.
final class CDOC1DDOC {
    private let sink: PlainFileSink
    private var parser: SafeXMLStreamParser?
    private var decoder: CDOC1Base64Decoder?
    private var names = Set<String>()
    private var count = 0

    init(into sink: PlainFileSink) {
        self.sink = sink
        // The text outside DataFile stays under libxml2's own limit (no largeText).
        parser = SafeXMLStreamParser(name: "ddoc", divertedPath: ["SignedDoc", "DataFile"], literalText: { [unowned self] text in
            try base64 { try $0.takePrefix(text, output: self.sink.write) }
        }, edges: { [unowned self] element in
            if let element { try begin(element) } else { try end() }
        }, text: { [unowned self] text in
            try base64 { try $0.take(text, output: self.sink.write) }
        })
    }

    func feed(_ bytes: UnsafeRawBufferPointer) throws {
        try readable { try parser?.feed(bytes) }
    }

    /// The end of the DDOC: throws unless it was a whole `SignedDoc` with files.
    func finish() throws {
        let xml = try readable { try parser!.finish() }
        parser = nil
        guard let root = xml.root, root.localName == "SignedDoc" else {
            throw CDOCError(.malformed, "the decrypted payload is not a DDOC (no SignedDoc)")
        }
        if count == 0 { throw CDOCError(.malformed, "the decrypted DDOC holds no files") }
    }

    private func begin(_ entry: XMLElement) throws {
        count += 1
        guard let name = entry.attribute("Filename", namespace: nil) else {
            throw CDOCError(.malformed, "file \(count) of the DDOC has no name (Filename)")
        }
        let contentType = entry.attribute("ContentType", namespace: nil) ?? "EMBEDDED_BASE64"
        guard contentType == "EMBEDDED_BASE64" else {
            throw CDOCError(.unsupported, "file \(count) of the DDOC is \(SafeFileName.escaped(contentType)), not EMBEDDED_BASE64")
        }
        try SafeFileName.check(name)
        guard names.insert(name).inserted else {
            throw CDOCError(.unsafeName, "the file name '\(SafeFileName.escaped(name))' appears twice")
        }
        try sink.begin(name: name, size: nil)
        decoder = CDOC1Base64Decoder()
    }

    private func end() throws {
        try base64 { try $0.finish(output: sink.write) }
        decoder = nil
        try sink.end()
    }

    /// Runs `body` with the current file's decoder; text outside a file's content is not base64.
    private func base64<T>(_ body: (CDOC1Base64Decoder) throws -> T) throws -> T {
        guard let decoder else { throw CDOCError(.malformed, "the decrypted DDOC is not readable") }
        do { return try body(decoder) } catch is CDOC1Base64Decoder.NotBase64 {
            throw CDOCError(.malformed, "file \(count) of the DDOC is not base64")
        }
    }

    private func readable<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as XMLError {
            throw CDOCError(.malformed, "the decrypted DDOC is not readable: \(error.reason)")
        }
    }
}

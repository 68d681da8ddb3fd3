import Crypto

/// What Fuzz/fuzz-cdoc1 runs: the CDOC 1.x stream reader and the DDOC reader over bytes fed in
/// pieces of a given size, summed up in one line, so the fuzzer can check that where the pieces
/// are cut changes nothing (the payload's base64 skips libxml2 only where it can).
@_spi(Fuzzing) public enum CDOC1Fuzzing {
    /// A CDOC 1.x document read in pieces of `piece` bytes: with `decode` the payload decoded
    /// (its length and SHA-256), else skipped; the document's cipher, recipients and properties.
    public static func cdoc1(_ bytes: UnsafeRawBufferPointer, piece: Int, decode: Bool) -> String {
        let hasher = Hasher(.sha256)
        do {
            let (xml, length) = try CDOC1Stream.read(payload: decode ? { hasher.update($0) } : nil) { parser in
                try feed(bytes, piece: piece) { try parser.feed($0) }
            }
            let document = try CDOC1Document.parse(xml)
            return "ok \(length.map { "\($0) " + hasher.finish().hexString } ?? "skipped") \(document.payloadMethod) "
                + "\(document.keys.count) \(document.properties.map { $0.name + "=" + $0.value })"
        } catch let error as CDOCError {
            return "refused \(error.code)"
        } catch {
            return "refused \(error)"
        }
    }

    /// A DDOC read in pieces of `piece` bytes: each file's name, length and SHA-256.
    public static func ddoc(_ bytes: UnsafeRawBufferPointer, piece: Int) -> String {
        let sink = Summary()
        do {
            let reader = CDOC1DDOC(into: sink)
            try feed(bytes, piece: piece) { try reader.feed($0) }
            try reader.finish()
            return "ok " + sink.files.joined(separator: " ")
        } catch let error as CDOCError {
            return "refused \(error.code)"
        } catch {
            return "refused \(error)"
        }
    }

    private static func feed(_ bytes: UnsafeRawBufferPointer, piece: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        var offset = 0
        while offset < bytes.count {
            let count = min(piece, bytes.count - offset)
            try body(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
            offset += count
        }
    }

    private final class Summary: PlainFileSink {
        var files: [String] = []
        private var current: (name: String, count: Int, hasher: Hasher)?
        func begin(name: String, size: Int64?) throws { current = (name, 0, Hasher(.sha256)) }
        func write(_ bytes: UnsafeRawBufferPointer) throws {
            current?.count += bytes.count
            current?.hasher.update(bytes)
        }
        func end() throws {
            if let current { files.append("\(current.name):\(current.count):\(current.hasher.finish().hexString)") }
            current = nil
        }
        func abandon() { files = [] }
    }
}

import Crypto
import Foundation
import SafeXML

/// The decrypted payload of a CDOC 1.x file turned into files, all streaming: the cipher (CBC
/// with its double padding, or GCM), libdigidoc's optional zlib layer (inflated as it comes, with
/// the bomb limits), and the DDOC 1.3 wrapper of several files (parsed as it comes, `CDOC1DDOC`).
/// Memory stays bounded whatever the size; plaintext reaches the sink before the tag is checked,
/// and the sink drops everything when anything fails.
enum CDOC1Payload {
    /// Decrypts the payload read again from `descriptor` with the transport key into `sink`.
    static func decrypt(_ document: CDOC1Document, from descriptor: Int32, key: SecretBytes, into sink: PlainFileSink) throws {
        try decrypt(document, key: key, into: sink) { payload in try CDOC1Stream.read(descriptor, payload: payload).1 ?? 0 }
    }

    /// The same with the document's payload read by `read`, which returns its decoded length.
    static func decrypt(_ document: CDOC1Document, key: SecretBytes, into sink: PlainFileSink,
                        read: (@escaping (UnsafeRawBufferPointer) throws -> Void) throws -> Int64) throws {
        let gcm = try checkCipher(document, key: key)
        do {
            let (plain, finish) = try plainStages(document, into: sink)
            let decryptor = CDOC1PayloadDecryptor(gcm: gcm, key: key, output: plain)
            let length = try read(decryptor.take)
            try checkLength(length, gcm: gcm)
            try decryptor.finish()
            try finish()
        } catch {
            sink.abandon()
            throw error
        }
    }

    /// Where the plaintext goes, and what ends it: the zlib layer first when there is one, then
    /// a DDOC's parser or the one named file.
    private static func plainStages(_ document: CDOC1Document, into sink: PlainFileSink) throws
        -> (write: (UnsafeRawBufferPointer) throws -> Void, finish: () throws -> Void) {
        let compressed = document.mimeType == CDOC1Names.zlibMimeType
        let realType = compressed ? document.property("OriginalMimeType") : document.mimeType
        var write: (UnsafeRawBufferPointer) throws -> Void
        var finish: () throws -> Void
        if let realType, CDOC1Names.ddocMimeTypes.contains(realType) {
            let ddoc = CDOC1DDOC(into: sink)
            write = ddoc.feed
            finish = ddoc.finish
        } else {
            try sink.begin(name: try fileName(document), size: nil)
            write = sink.write
            finish = sink.end
        }
        guard compressed else { return (write, finish) }
        var limits = ZlibInflater.Limits()
        if let declared = document.property("OriginalSize").flatMap({ Int64($0) }) { limits.maximumOutput = declared }
        let inflater = try ZlibInflater(limits: limits)
        let inner = (write, finish)
        write = { try inflater.feed($0, inner.0) }
        finish = {
            guard inflater.finished else { throw CDOCError(.malformed, "the compressed payload is not a complete zlib stream") }
            try inner.1()
        }
        return (write, finish)
    }

    private static func fileName(_ document: CDOC1Document) throws -> String {
        guard let name = document.property("Filename") ?? document.properties.first(where: { $0.name == "orig_file" })
            .map({ String($0.value.split(separator: "|", omittingEmptySubsequences: false).first ?? "") }) else {
            throw CDOCError(.malformed, "the file's name is missing (no Filename property)")
        }
        try SafeFileName.check(name)
        return name
    }

    /// True for GCM; throws when the cipher or the key cannot be right.
    static func checkCipher(_ document: CDOC1Document, key: SecretBytes) throws -> Bool {
        guard let cipher = CDOC1Names.payloadCipher(document.payloadMethod) else {
            throw CDOCError(.unsupported, "the payload cipher \(document.payloadMethod) is not one CDOC 1.x uses")
        }
        guard key.count == cipher.keyLength else {
            throw CDOCError(.wrongKey, "the decrypted key has the wrong length for \(document.payloadMethod) (wrong key or changed file)")
        }
        return cipher.gcm
    }

    /// Throws when the decoded payload's `length` cannot be IV, ciphertext (and tag).
    static func checkLength(_ length: Int64, gcm: Bool) throws {
        if gcm {
            guard length >= Int64(AESGCM.ivLength + AESGCM.tagLength) else { throw CDOCError(.malformed, "the encrypted payload is truncated") }
        } else {
            guard length >= Int64(2 * AES.blockSize), length % Int64(AES.blockSize) == 0 else {
                throw CDOCError(.malformed, "the encrypted payload is truncated")
            }
        }
    }
}

/// CDOC 1.0's own padding under PKCS#7 (spec §1.2): ANSI X9.23, `00…00 N` to a whole block, a
/// full block when the data is already whole blocks.
enum CDOC1Padding {
    /// Removes X9.23 padding only where it is unmistakable (last byte N in 1…16 and the N−1 bytes before it zero).
    static func removeX923(_ data: inout [UInt8]) {
        guard let last = data.last, (1...16).contains(last), data.count >= Int(last) else { return }
        let start = data.count - Int(last)
        guard data[start..<(data.count - 1)].allSatisfy({ $0 == 0 }) else { return }
        data.removeSubrange(start...)
    }

    /// The X9.23 padding after `length` bytes of plaintext: zeros and their count, 1…16 bytes.
    static func x923(after length: Int64) -> [UInt8] {
        let count = 16 - Int(length % 16)
        return [UInt8](repeating: 0, count: count - 1) + [UInt8(count)]
    }
}

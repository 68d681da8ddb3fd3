import Crypto

/// The decoded bytes of a CDOC 1.x payload (IV, ciphertext, GCM tag) decrypted as they arrive:
/// the IV is taken from the front, the last 16 bytes are held back as the possible tag (GCM), and
/// the last 16 plaintext bytes as the possible X9.23 padding (CBC). Plaintext goes to `output`
/// before it is authenticated: `finish` throws when it fails, and the caller drops what it got.
final class CDOC1PayloadDecryptor {
    private let gcm: Bool
    private let key: SecretBytes
    private let output: (UnsafeRawBufferPointer) throws -> Void
    private var iv: [UInt8] = []
    private var cipher: AESStreamDecryption?
    private var heldCiphertext: [UInt8] = []
    private var heldPlaintext: [UInt8] = []

    init(gcm: Bool, key: SecretBytes, output: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.gcm = gcm
        self.key = key
        self.output = output
    }

    deinit { SecretBytes.zero(&heldPlaintext) }

    private var ivLength: Int { gcm ? AESGCM.ivLength : AES.blockSize }

    func take(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes[...]
        if cipher == nil {
            let needed = min(ivLength - iv.count, rest.count)
            iv += rest.prefix(needed)
            rest = rest.dropFirst(needed)
            guard iv.count == ivLength else { return }
            cipher = try AESStreamDecryption(gcm ? .gcm : .cbcPadded, key: key, iv: iv)
        }
        guard let cipher, !rest.isEmpty else { return }
        if !gcm {
            try cipher.update(UnsafeRawBufferPointer(rebasing: rest), output: emit)
            return
        }
        heldCiphertext += rest
        let ready = heldCiphertext.count - AESGCM.tagLength
        if ready > 0 {
            try heldCiphertext.withUnsafeBytes { try cipher.update(UnsafeRawBufferPointer(rebasing: $0[..<ready]), output: emit) }
            heldCiphertext.removeFirst(ready)
        }
    }

    /// Checks the tag or padding and hands on the rest of the plaintext.
    func finish() throws {
        guard let cipher else { throw CDOCError(.malformed, "the encrypted payload is truncated") }
        if gcm {
            do { try cipher.finish(tag: heldCiphertext, output: emit) } catch let error as CDOCError { throw error } catch {
                throw CDOCError(.tampered, "the payload does not authenticate (changed or truncated file, or the wrong key)")
            }
        } else {
            do { try cipher.finish(output: emit) } catch let error as CDOCError { throw error } catch {
                throw CDOCError(.wrongKey, "the payload does not decrypt (wrong key or changed file)")
            }
            CDOC1Padding.removeX923(&heldPlaintext)
        }
        try heldPlaintext.withUnsafeBytes { try output($0) }
        SecretBytes.zero(&heldPlaintext)
    }

    /// CBC keeps the last 16 plaintext bytes until the end (X9.23 padding); GCM hands all on.
    private func emit(_ plain: UnsafeRawBufferPointer) throws {
        if gcm {
            try output(plain)
            return
        }
        heldPlaintext += plain
        let ready = heldPlaintext.count - AES.blockSize
        if ready > 0 {
            try heldPlaintext.withUnsafeBytes { try output(UnsafeRawBufferPointer(rebasing: $0[..<ready])) }
            heldPlaintext.replaceSubrange(..<ready, with: [])
        }
    }
}

import Crypto
import Glibc

/// A CDOC2 container (spec §2): the envelope and header are read when it opens; `decrypt`
/// finds the recipient the unlocker opens, checks the header MAC before anything else, then
/// streams the payload (ChaCha20-Poly1305 → zlib → tar) into the sink with bounded memory.
public final class CDOC2Reader: EncryptedContainerReader {
    static let magic: [UInt8] = [0x43, 0x44, 0x4F, 0x43, 0x02]
    static let maximumHeader = 1 << 20
    static let macSize = 32
    static let maximumIterations = 10_000_000

    private let descriptor: Int32
    let headerBytes: [UInt8]
    let header: CDOC2Header
    let mac: [UInt8]
    let payloadOffset: Int64
    let fileSize: Int64
    /// Tests shrink the bomb guard.
    var inflateLimits = ZlibInflater.Limits()

    public init(descriptor: Int32) throws {
        self.descriptor = descriptor
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw CDOCError(.io, "cannot read the container: \(String(cString: strerror(errno)))") }
        fileSize = Int64(status.st_size)
        let prefix = try Self.read(descriptor, at: 0, count: 9)
        guard prefix.count == 9, Array(prefix[0 ..< 5]) == Self.magic else {
            throw CDOCError(.malformed, "the CDOC2 file is truncated or not CDOC2")
        }
        let length = Int(prefix[5]) << 24 | Int(prefix[6]) << 16 | Int(prefix[7]) << 8 | Int(prefix[8])
        guard length > 0, length <= Self.maximumHeader else { throw CDOCError(.malformed, "the CDOC2 header length \(length) is out of range") }
        payloadOffset = Int64(9 + length + Self.macSize)
        guard fileSize >= payloadOffset + Int64(ChaCha20Poly1305.nonceSize + ChaCha20Poly1305.tagSize) else {
            throw CDOCError(.malformed, "the CDOC2 file is truncated")
        }
        headerBytes = try Self.read(descriptor, at: 9, count: length)
        mac = try Self.read(descriptor, at: Int64(9 + length), count: Self.macSize)
        guard headerBytes.count == length, mac.count == Self.macSize else { throw CDOCError(.malformed, "the CDOC2 file is truncated") }
        header = try CDOC2Header.parse(headerBytes)
        guard header.payloadMethod == CDOC2Header.chacha20Poly1305 else {
            throw CDOCError(.unsupported, "the CDOC2 payload uses an unknown cipher (\(header.payloadMethod))")
        }
    }

    public var format: EncryptedFormat { .cdoc2 }

    public var recipients: [Recipient] { header.records.compactMap(Self.recipient) }

    public var listedFiles: [(name: String, size: Int64?)] { [] }

    static func recipient(_ record: CDOC2Header.Record) -> Recipient? {
        let label = record.keyLabel
        let shown = CDOC2KeyLabel.displayName(label)
        switch record.capsule {
        case .ecc(_, let key, _): return Recipient(kind: .ecPublicKey, label: label, displayName: shown, publicKey: key)
        case .rsa(let key, _): return Recipient(kind: .rsaPublicKey, label: label, displayName: shown, publicKey: key)
        case .keyServer(let key, _, let server, let transaction):
            return Recipient(kind: .keyServer, label: label, displayName: shown, publicKey: key, keyServerID: server, transactionID: transaction)
        case .symmetricKey: return Recipient(kind: .symmetricKey, label: label, displayName: shown)
        case .pbkdf2: return Recipient(kind: .password, label: label, displayName: shown)
        case .keyShares: return Recipient(kind: .keyShares, label: label, displayName: shown)
        case .unknown: return nil
        }
    }

    public func decrypt(with unlocker: Unlocker, into sink: PlainFileSink) throws {
        do {
            let fmk = try fileMasterKey(for: unlocker)
            try streamPayload(fmk: fmk, into: sink)
        } catch {
            sink.abandon()
            throw error
        }
    }

    // MARK: the file master key

    /// FMK of the record `unlocker` opens, after the header MAC proved it right.
    func fileMasterKey(for unlocker: Unlocker) throws -> SecretBytes {
        let record = try CDOC2RecipientChoice.record(in: header.records, for: unlocker)
        guard record.fmkMethod == 1 else { throw CDOCError(.unsupported, "the recipient's key is protected by an unknown method") }
        guard record.encryptedFMK.count == CDOC2Keys.keySize else { throw CDOCError(.malformed, "the recipient's encrypted key is not 32 bytes") }
        let kek = try keyEncryptionKey(record, unlocker)
        let fmk = try CDOC2Keys.xor(kek, record.encryptedFMK)
        guard CMAC.equal(try CDOC2Keys.headerMAC(fmk: fmk, header: headerBytes), mac) else {
            throw CDOCError(.wrongKey, "wrong key or password")
        }
        return fmk
    }

    private func keyEncryptionKey(_ record: CDOC2Header.Record, _ unlocker: Unlocker) throws -> SecretBytes {
        switch (record.capsule, unlocker) {
        case (.ecc(let curve, let recipientKey, let senderKey), .key(let key)):
            guard let curve else { throw CDOCError(.unsupported, "the recipient's key is on an unknown curve") }
            let sender: PublicKey
            do { sender = try PublicKey.ec(point: senderKey, curve: curve) } catch {
                throw CDOCError(.malformed, "the sender's key in the CDOC2 header is not a \(curve.rawValue) point")
            }
            let z: SecretBytes
            do { z = try key.agree(with: sender) } catch { throw CDOCError(.wrongKey, "\(key.name) cannot agree on a key: \(error)") }
            return try CDOC2Keys.eccKEK(z: z, recipientKey: recipientKey, senderKey: senderKey)
        case (.rsa(_, let encryptedKEK), .key(let key)):
            do { return try key.decrypt(encryptedKEK, padding: .oaepSHA256) } catch {
                throw CDOCError(.wrongKey, "wrong key or password")
            }
        case (.symmetricKey(let salt), .symmetricKey(let secret, _)):
            guard !salt.isEmpty, !secret.isEmpty else { throw CDOCError(.malformed, "the symmetric-key recipient has no salt") }
            return try CDOC2Keys.symmetricKEK(secret: secret, salt: salt, keyLabel: record.keyLabel)
        case (.pbkdf2(let salt, let passwordSalt, let algorithm, let iterations), .password(let password, _)):
            guard algorithm == 1 else { throw CDOCError(.unsupported, "the password recipient uses an unknown key derivation (\(algorithm))") }
            guard iterations > 0, iterations <= Self.maximumIterations else {
                throw CDOCError(.limit, "the password recipient asks for \(iterations) PBKDF2 iterations (at most \(Self.maximumIterations))")
            }
            guard !salt.isEmpty, !passwordSalt.isEmpty else { throw CDOCError(.malformed, "the password recipient has no salt") }
            let ikm = try PBKDF2.sha256(password: password, salt: passwordSalt, iterations: iterations, length: CDOC2Keys.keySize)
            return try CDOC2Keys.symmetricKEK(secret: ikm, salt: salt, keyLabel: record.keyLabel)
        default:
            throw CDOCError(.noRecipient, "this key or password does not fit the chosen recipient")
        }
    }

    // MARK: the payload

    private func streamPayload(fmk: SecretBytes, into sink: PlainFileSink) throws {
        let nonce = try Self.read(descriptor, at: payloadOffset, count: ChaCha20Poly1305.nonceSize)
        let tagOffset = fileSize - Int64(ChaCha20Poly1305.tagSize)
        let tag = try Self.read(descriptor, at: tagOffset, count: ChaCha20Poly1305.tagSize)
        let cipher = try ChaCha20Poly1305(key: try CDOC2Keys.contentKey(fmk: fmk), nonce: nonce, encrypting: false)
        try cipher.authenticate(CDOC2Keys.payloadAAD(header: headerBytes, mac: mac))
        let inflater = try ZlibInflater(limits: inflateLimits)
        let tar = TarReader(sink: sink)
        // A format error is reported only after the tag has checked (spec §2.5): until then the
        // rest is decrypted and dropped.
        var formatError: Error?
        var position = payloadOffset + Int64(ChaCha20Poly1305.nonceSize)
        let chunk = 1 << 20
        var input = [UInt8](repeating: 0, count: chunk)
        var plain = [UInt8](repeating: 0, count: chunk)
        defer { SecretBytes.zero(&plain) }
        while position < tagOffset {
            let want = Int(min(Int64(chunk), tagOffset - position))
            let got = try input.withUnsafeMutableBytes { try Self.readFully(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<want]), at: position) }
            guard got == want else { throw CDOCError(.io, "the container changed while it was read") }
            position += Int64(got)
            let produced = try input.withUnsafeBytes { inBytes in
                try plain.withUnsafeMutableBytes { try cipher.update(UnsafeRawBufferPointer(rebasing: inBytes[..<got]), into: $0) }
            }
            guard formatError == nil else { continue }
            do {
                try plain.withUnsafeBytes { out in
                    try inflater.feed(UnsafeRawBufferPointer(rebasing: out[..<produced])) { try tar.feed($0) }
                }
            } catch let error as CDOCError where error.code != .io {
                formatError = error
            }
        }
        guard try cipher.finishDecrypting(tag: tag) else {
            throw CDOCError(.tampered, "the CDOC2 payload fails its authentication: the file is damaged or was changed")
        }
        if let formatError { throw formatError }
        guard inflater.finished else { throw CDOCError(.malformed, "the CDOC2 payload's compressed stream is cut short") }
        guard tar.isComplete else { throw CDOCError(.malformed, "the CDOC2 payload's tar archive is cut short") }
    }

    // MARK: reading

    static func read(_ descriptor: Int32, at offset: Int64, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { try readFully(descriptor, into: $0, at: offset) }
        return Array(bytes[..<got])
    }

    /// pread until `buffer` is full or the file ends.
    static func readFully(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw CDOCError(.io, "cannot read the container: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            done += n
        }
        return done
    }
}

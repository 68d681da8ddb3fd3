import Crypto
import Glibc

/// Writes a CDOC2 container: one record per recipient around a fresh file master key, the
/// header and its MAC, then the files as a libcdoc-style tar, zlib-compressed and encrypted with
/// ChaCha20-Poly1305 under a fresh nonce, streamed from the sources with bounded memory.
public struct CDOC2Writer: EncryptedContainerWriter {
    public static let passwordIterations = 600_000

    public init() {}

    public func write(files: [PlainFileSource], for recipients: [RecipientSpec], to descriptor: Int32) throws {
        guard !recipients.isEmpty else { throw CDOCError(.noRecipient, "a container needs at least one recipient") }
        let fmk = try CDOC2Keys.newFMK()
        let records = try recipients.map { try Self.record(for: $0, fmk: fmk) }
        let header = CDOC2Header(records: records).serialized()
        let mac = try CDOC2Keys.headerMAC(fmk: fmk, header: header)
        let nonce = try SecureRandom.bytes(ChaCha20Poly1305.nonceSize)
        let output = DescriptorOutput(descriptor)
        let length = UInt32(header.count)
        try output.write(CDOC2Reader.magic + [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
        try output.write(header + mac + nonce)

        let cipher = try ChaCha20Poly1305(key: try CDOC2Keys.contentKey(fmk: fmk), nonce: nonce, encrypting: true)
        try cipher.authenticate(CDOC2Keys.payloadAAD(header: header, mac: mac))
        let deflater = try IgzipZlibDeflater()
        var sealed = [UInt8](repeating: 0, count: 256 << 10)
        let encrypt: (UnsafeRawBufferPointer) throws -> Void = { compressed in
            let count = try sealed.withUnsafeMutableBytes { try cipher.update(compressed, into: $0) }
            try sealed.withUnsafeBytes { try output.write(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
        let tar: (UnsafeRawBufferPointer) throws -> Void = { try deflater.feed($0, encrypt) }

        var names = Set<String>()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        defer { SecretBytes.zero(&buffer) }
        for file in files {
            try SafeFileName.check(file.name)
            guard names.insert(file.name).inserted else { throw CDOCError(.unsafeName, "two files are named '\(SafeFileName.escaped(file.name))'") }
            try TarWriter.header(name: file.name, size: file.size).withUnsafeBytes(tar)
            var remaining = file.size
            while remaining > 0 {
                let want = Int(min(Int64(buffer.count), remaining))
                let got = try buffer.withUnsafeMutableBytes { try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<want])) }
                guard got > 0 else { throw CDOCError(.io, "'\(SafeFileName.escaped(file.name))' became shorter while it was encrypted") }
                try buffer.withUnsafeBytes { try tar(UnsafeRawBufferPointer(rebasing: $0[..<got])) }
                remaining -= Int64(got)
            }
            try [UInt8](repeating: 0, count: TarWriter.padding(after: file.size)).withUnsafeBytes(tar)
        }
        try TarWriter.end.withUnsafeBytes(tar)
        try deflater.finish(encrypt)
        try output.write(try cipher.finishEncrypting())
    }

    static func record(for recipient: RecipientSpec, fmk: SecretBytes) throws -> CDOC2Header.Record {
        switch recipient {
        case .certificate(let certificate):
            guard let key = certificate.publicKey else { throw CDOCError(.unsupported, "the recipient certificate's key cannot be read") }
            return try keyRecord(key, label: CDOC2KeyLabel.forCertificate(certificate), fmk: fmk)
        case .publicKey(let key, let label):
            return try keyRecord(key, label: label.hasPrefix("data:") ? label : CDOC2KeyLabel.forKind("pub_key", label: label), fmk: fmk)
        case .symmetricKey(let secret, let label):
            guard secret.count >= CDOC2Keys.keySize else { throw CDOCError(.unsupported, "a CDOC2 symmetric key is at least 32 bytes") }
            let keyLabel = label.hasPrefix("data:") ? label : CDOC2KeyLabel.forKind("secret", label: label)
            let salt = try SecureRandom.bytes(32)
            let kek = try CDOC2Keys.symmetricKEK(secret: secret, salt: salt, keyLabel: keyLabel)
            return CDOC2Header.Record(capsule: .symmetricKey(salt: salt), keyLabel: keyLabel,
                                      encryptedFMK: try CDOC2Keys.encryptedFMK(fmk, kek), fmkMethod: 1)
        case .password(let password, let label):
            guard !password.isEmpty else { throw CDOCError(.unsupported, "the password is empty") }
            let keyLabel = label.hasPrefix("data:") ? label : CDOC2KeyLabel.forKind("pw", label: label)
            let salt = try SecureRandom.bytes(32), passwordSalt = try SecureRandom.bytes(32)
            let ikm = try PBKDF2.sha256(password: password, salt: passwordSalt, iterations: passwordIterations, length: CDOC2Keys.keySize)
            let kek = try CDOC2Keys.symmetricKEK(secret: ikm, salt: salt, keyLabel: keyLabel)
            return CDOC2Header.Record(capsule: .pbkdf2(salt: salt, passwordSalt: passwordSalt, algorithm: 1, iterations: passwordIterations),
                                      keyLabel: keyLabel, encryptedFMK: try CDOC2Keys.encryptedFMK(fmk, kek), fmkMethod: 1)
        }
    }

    private static func keyRecord(_ key: PublicKey, label: String, fmk: SecretBytes) throws -> CDOC2Header.Record {
        let recipientKey = try key.rawKeyBytes()
        if let curve = key.curve {
            guard CDOC2Header.number(of: curve) != nil else { throw CDOCError(.unsupported, "CDOC2 has no capsule for \(curve.rawValue) keys") }
            let ephemeral = try PrivateKey.generateEC(curve)
            let senderKey = try ephemeral.publicKey.rawKeyBytes()
            let kek = try CDOC2Keys.eccKEK(z: try ephemeral.agree(with: key), recipientKey: recipientKey, senderKey: senderKey)
            return CDOC2Header.Record(capsule: .ecc(curve: curve, recipientKey: recipientKey, senderKey: senderKey), keyLabel: label,
                                      encryptedFMK: try CDOC2Keys.encryptedFMK(fmk, kek), fmkMethod: 1)
        }
        let kek = try SecureRandom.secret(CDOC2Keys.keySize)
        let encryptedKEK = try key.encrypt(kek, padding: .oaepSHA256)
        return CDOC2Header.Record(capsule: .rsa(recipientKey: recipientKey, encryptedKEK: encryptedKEK), keyLabel: label,
                                  encryptedFMK: try CDOC2Keys.encryptedFMK(fmk, kek), fmkMethod: 1)
    }
}

/// Writes everything it is given to a descriptor, retrying short writes.
final class DescriptorOutput {
    private let descriptor: Int32
    init(_ descriptor: Int32) { self.descriptor = descriptor }

    func write(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try write($0) } }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw CDOCError(.io, "cannot write the container: \(String(cString: strerror(errno)))") }
            done += n
        }
    }
}

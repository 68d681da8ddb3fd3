import Crypto

/// The transport key of one CDOC 1.x recipient: RSA PKCS#1 v1.5, or ECDH-ES + ConcatKDF + AES
/// key wrap (spec §1.3, §1.4). Writing does the reverse.
enum CDOC1KeyTransport {
    /// The first of `entries` (one certificate listed more than once) that yields the key.
    static func unwrap(_ entries: [CDOC1Document.EncryptedKey], with key: RecipientKey) throws -> SecretBytes {
        var failure: Error?
        for entry in entries {
            do { return try unwrap(entry, with: key) } catch { failure = failure ?? error }
        }
        throw failure ?? CDOCError(.noRecipient, "\(key.name) is not one of the recipients")
    }

    static func unwrap(_ recipient: CDOC1Document.EncryptedKey, with key: RecipientKey) throws -> SecretBytes {
        if let agreement = recipient.agreement {
            guard let kekLength = CDOC1Names.keyWrap[recipient.method] else {
                throw CDOCError(.unsupported, "an EC recipient's key is wrapped with \(recipient.method), not AES key wrap")
            }
            let senderKey: PublicKey
            do { senderKey = try PublicKey.ec(point: agreement.senderPoint, curve: agreement.curve) } catch {
                throw CDOCError(.malformed, "the sender key is not a point on \(agreement.curve.rawValue)")
            }
            let z: SecretBytes
            do { z = try key.agree(with: senderKey) } catch let error as CDOCError { throw error } catch {
                throw CDOCError(.wrongKey, "\(key.name) cannot agree on a key with the sender: \(error)")
            }
            defer { z.wipe() }
            let kek = try ConcatKDF.derive(secret: z, otherInfo: agreement.algorithmID + agreement.partyUInfo + agreement.partyVInfo,
                                           digest: agreement.digest, length: kekLength)
            defer { kek.wipe() }
            do { return try AESKeyWrap.unwrap(kek: kek, recipient.cipherValue) } catch {
                throw CDOCError(.wrongKey, "the key for \(recipient.certificate.subjectLine) does not unwrap with \(key.name) (wrong key or changed file)")
            }
        }
        guard recipient.method == CDOC1Names.rsa15 else {
            throw CDOCError(.unsupported, "an RSA recipient's key is encrypted with \(recipient.method), not rsa-1_5")
        }
        do { return try key.decrypt(recipient.cipherValue, padding: .pkcs1v15) } catch let error as CDOCError { throw error } catch {
            throw CDOCError(.wrongKey, "\(key.name) cannot decrypt the key for \(recipient.certificate.subjectLine) (wrong key or changed file)")
        }
    }

    /// What a writer puts into one `EncryptedKey`.
    enum Wrapped {
        case rsa(cipherValue: [UInt8])
        case ec(cipherValue: [UInt8], curve: EllipticCurve, senderPoint: [UInt8], digest: DigestAlgorithm, algorithmID: [UInt8])
    }

    /// Wraps `transportKey` for `certificate` (EC: a fresh ephemeral key on its curve; the digest by
    /// coordinate length as libcdoc picks it: 32 → SHA-256, 48 → SHA-384, else SHA-512).
    static func wrap(_ transportKey: SecretBytes, for certificate: Certificate, documentFormat: String) throws -> Wrapped {
        guard let publicKey = certificate.publicKey else { throw CDOCError(.unsupported, "the certificate \(certificate.subjectLine) has no usable key") }
        if publicKey.isRSA {
            return .rsa(cipherValue: try publicKey.encrypt(transportKey, padding: .pkcs1v15))
        }
        guard publicKey.isEC, let curve = publicKey.curve, [.p256, .p384, .p521].contains(curve) else {
            throw CDOCError(.unsupported, "the certificate \(certificate.subjectLine) has neither an RSA nor a P-256/P-384/P-521 key")
        }
        let ephemeral = try PrivateKey.generateEC(curve)
        let senderPoint = try ephemeral.publicKey.rawKeyBytes()
        let coordinate = (senderPoint.count - 1) / 2
        let digest: DigestAlgorithm = coordinate == 32 ? .sha256 : coordinate == 48 ? .sha384 : .sha512
        let algorithmID = Array(documentFormat.utf8)
        let z = try ephemeral.agree(with: publicKey)
        defer { z.wipe() }
        let kek = try ConcatKDF.derive(secret: z, otherInfo: algorithmID + senderPoint + certificate.der, digest: digest, length: 32)
        defer { kek.wipe() }
        return .ec(cipherValue: try AESKeyWrap.wrap(kek: kek, transportKey), curve: curve, senderPoint: senderPoint,
                   digest: digest, algorithmID: algorithmID)
    }
}

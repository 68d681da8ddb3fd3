import CDOC
import Crypto
import Foundation

/// A PKCS#12 file as the key of a recipient: its certificate picks the recipient.
enum PKCS12RecipientKey {
    static func open(file: String, asker: SecretAsker) throws -> SoftwareRecipientKey {
        guard let data = FileManager.default.contents(atPath: file) else { throw CDOCError(.io, "cannot read the PKCS#12 file \(file)") }
        let name = URL(fileURLWithPath: file).lastPathComponent
        let passphrase = try asker.secret(fileKey: "passphrase-file", descriptorKey: "passphrase-fd",
                                          request: SecretRequest(title: "asicfs: PKCS#12", description: "Decrypting with the PKCS#12 file \(file)",
                                                                 prompt: "Passphrase for \(name)"))
        defer { passphrase.wipe() }
        let identity: PKCS12Identity
        do { identity = try PKCS12Identity(bytes: Array(data), passphrase: passphrase, name: name) } catch let error as CryptoError {
            throw CDOCError(.wrongKey, error.description)
        }
        return SoftwareRecipientKey(name: name, privateKey: identity.privateKey, certificate: identity.certificate)
    }
}

/// A PEM or DER private key file (optionally encrypted PEM) and, if given, its certificate.
enum PrivateKeyFile {
    static func open(file: String, certificateFile: String?, asker: SecretAsker) throws -> SoftwareRecipientKey {
        guard let data = FileManager.default.contents(atPath: file) else { throw CDOCError(.io, "cannot read the key file \(file)") }
        let bytes = Array(data)
        let name = URL(fileURLWithPath: file).lastPathComponent
        let privateKey: PrivateKey
        if let key = try? PrivateKey.read(bytes) {
            privateKey = key
        } else {
            guard String(decoding: bytes.prefix(4096), as: UTF8.self).contains("ENCRYPTED") else {
                throw CDOCError(.malformed, "\(name) is not a private key (PEM or DER)")
            }
            let passphrase = try asker.secret(fileKey: "passphrase-file", descriptorKey: "passphrase-fd",
                                              request: SecretRequest(title: "asicfs: key", description: "Decrypting with the key \(file)",
                                                                     prompt: "Passphrase for \(name)"))
            defer { passphrase.wipe() }
            do { privateKey = try PrivateKey.read(bytes, passphrase: passphrase) } catch {
                throw CDOCError(.wrongKey, "wrong passphrase for \(name)")
            }
        }
        var certificate: Certificate? = nil
        if let certificateFile {
            guard let certificateData = FileManager.default.contents(atPath: certificateFile) else {
                throw CDOCError(.io, "cannot read the certificate file \(certificateFile)")
            }
            do { certificate = try Certificate.parse(Array(certificateData)) } catch {
                throw CDOCError(.malformed, "\(certificateFile) is not a certificate (PEM or DER)")
            }
        }
        return SoftwareRecipientKey(name: name, privateKey: privateKey, certificate: certificate)
    }
}

/// A symmetric key file: the key in base64 on its first line (as cdoc2-cli's `base64,` secrets).
enum SymmetricKeyFile {
    static func read(_ file: String) throws -> SecretBytes {
        let line: SecretBytes
        do { line = try SecretBytes.read(file: file) } catch let error as CryptoError { throw CDOCError(.io, error.description) }
        defer { line.wipe() }
        var text = line.withBytes { String(decoding: $0, as: UTF8.self) }
        if text.hasPrefix("base64,") { text.removeFirst("base64,".count) }
        guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespaces)), !data.isEmpty else {
            throw CDOCError(.malformed, "the secret file \(file) does not hold a base64 key on its first line")
        }
        var bytes = [UInt8](data)
        defer { SecretBytes.zero(&bytes) }
        return SecretBytes(bytes)
    }
}

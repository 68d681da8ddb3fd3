import Crypto
import Foundation

/// Signs with a software identity: a PKCS#12 file and its passphrase. The passphrase is read
/// into wiped memory, used once to open the file, and dropped; the key lives only in memory.
public struct PKCS12Signer: Signer, SignerFactory {
    public let method = "pkcs12"
    public static let parameterKeys: Set<String> = ["file", "passphrase-file"]
    public static let usage = "file=PATH passphrase-file=PATH\nexample: echo \"file=$HOME/me.p12 passphrase-file=$HOME/.me.pass\" > .asicfs/sign/pkcs12"

    public static func validate(_ parameters: SigningParameters) throws {
        guard let file = parameters["file"], !file.isEmpty else {
            throw SigningParameterError("pkcs12: 'file=PATH' is required (the .p12 or .pfx file)")
        }
    }

    public static func make(_ parameters: SigningParameters, context: SignerContext) throws -> Signer {
        try PKCS12Signer(parameters: parameters)
    }
    let identity: PKCS12Identity

    public init(file: String, passphrase: SecretBytes) throws {
        let name = PKCS12Signer.displayName(file)
        guard let data = FileManager.default.contents(atPath: file) else {
            throw SigningError("cannot read the PKCS#12 file \(file)")
        }
        do {
            identity = try PKCS12Identity(bytes: Array(data), passphrase: passphrase, name: name)
        } catch let error as CryptoError {
            throw SigningError(error.description)
        }
        passphrase.wipe()
    }

    /// Builds the signer from `file=… passphrase-file=…`.
    public init(parameters: SigningParameters) throws {
        guard let file = parameters["file"], !file.isEmpty else {
            throw SigningParameterError("pkcs12: 'file=PATH' is required (the .p12 or .pfx file)")
        }
        guard let passphraseFile = parameters["passphrase-file"] else {
            throw SigningParameterError("pkcs12: 'passphrase-file=PATH' is required (a file holding the passphrase)")
        }
        let passphrase: SecretBytes
        do { passphrase = try SecretBytes.read(file: passphraseFile) } catch let error as CryptoError {
            throw SigningError(error.description)
        }
        try self.init(file: file, passphrase: passphrase)
    }

    public func certificate(events: (SigningEvent) -> Void) throws -> Certificate { identity.certificate }
    public var extraCertificates: [Certificate] { identity.chain }

    public func sign(digest: [UInt8], algorithm: SignatureAlgorithm, events: (SigningEvent) -> Void) throws -> [UInt8] {
        do { return try identity.privateKey.sign(digest: digest, algorithm: algorithm) } catch let error as CryptoError {
            throw SigningError(error.description)
        }
    }

    static func displayName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}

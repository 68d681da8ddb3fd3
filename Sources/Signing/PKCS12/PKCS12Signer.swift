import Crypto
import Foundation

/// Signs with a software identity: a PKCS#12 file and its passphrase. The passphrase is read
/// into wiped memory, used once to open the file, and dropped; the key lives only in memory.
public struct PKCS12Signer: Signer, SignerFactory {
    public let method = "pkcs12"
    public static let parameterKeys: Set<String> = ["file", "passphrase-file"]
    public static let usage = "file=PATH [passphrase-file=PATH]\nexample: echo \"file=$HOME/me.p12 passphrase-file=$HOME/.me.pass\" > .asicfs/sign/pkcs12"

    public static func validate(_ parameters: SigningParameters) throws {
        guard let file = parameters["file"], !file.isEmpty else {
            throw SigningParameterError("pkcs12: 'file=PATH' is required (the .p12 or .pfx file)")
        }
    }

    public static func make(_ parameters: SigningParameters, context: SignerContext) throws -> Signer {
        if parameters["passphrase-file"] != nil { return try PKCS12Signer(parameters: parameters) }
        return try askingForThePassphrase(file: parameters["file"] ?? "", context: context)
    }

    /// Without passphrase-file=: the secrets module asks (pinentry, else the terminal on the
    /// command line), three times, as PIN prompts do.
    static func askingForThePassphrase(file: String, context: SignerContext) throws -> PKCS12Signer {
        guard let source = SecretSource.choose(descriptor: nil, configuration: context.configuration,
                                               terminalAllowed: context.commandLine) else {
            throw SigningParameterError("pkcs12: 'passphrase-file=PATH' is required here (\(SecretSource.noPrompt))")
        }
        let name = displayName(file)
        var error: String? = nil
        for attempt in 1...3 {
            let request = SecretRequest(title: "asicfs: PKCS#12", description: "Signing with the PKCS#12 file \(file)",
                                        prompt: "Passphrase for \(name)", error: error)
            let passphrase: SecretBytes
            do { passphrase = try source.ask(request) } catch SecretEntryError.cancelled {
                throw SigningError("pkcs12: passphrase entry was cancelled; nothing was signed")
            } catch let failure as SecretEntryError {
                throw SigningError("pkcs12: \(failure)")
            }
            do { return try PKCS12Signer(file: file, passphrase: passphrase) } catch let failure as SigningError
                where attempt < 3 && failure.description.hasPrefix("wrong passphrase") {
                passphrase.wipe()
                error = "\(failure.description); try again (\(3 - attempt) left)"
            }
        }
        throw SigningError("wrong passphrase for \(name)")
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

import CDOC
import Configuration
import Crypto
import Foundation

/// Who decrypts an encrypted container, and the `key=value` parameters each way takes (the same
/// style as the signing methods). `unlocker(...)` turns them into the `Unlocker` the formats use;
/// PINs, passphrases and passwords come through the Secrets module only.
public enum DecryptionMethod: String, CaseIterable, Sendable {
    case idCard = "id-card", pkcs11, pkcs12, key, secret, password

    public var parameterKeys: Set<String> {
        switch self {
        case .idCard: IDCardRecipientKey.parameterKeys
        case .pkcs11: PKCS11RecipientKey.parameterKeys
        case .pkcs12: ["file", "passphrase-file", "passphrase-fd"]
        case .key: ["key-file", "passphrase-file", "passphrase-fd", "cert-file"]
        case .secret: ["secret-file", "label"]
        case .password: ["password-file", "password-fd", "label"]
        }
    }

    /// One line of parameters, for `--help` and the man page.
    public var usage: String {
        switch self {
        case .idCard: "id-card \(IDCardRecipientKey.usage): the ID-card's authentication key (PIN1)"
        case .pkcs11: "pkcs11 \(PKCS11RecipientKey.usage): a PKCS#11 token"
        case .pkcs12: "pkcs12 file=PATH [passphrase-file=PATH|passphrase-fd=N]: a PKCS#12 (.p12/.pfx) file"
        case .key: "key key-file=PATH [cert-file=PATH] [passphrase-file=PATH|passphrase-fd=N]: a PEM or DER private key"
        case .secret: "secret secret-file=PATH [label=TEXT]: a symmetric key, base64 on the file's first line (CDOC2)"
        case .password: "password [password-file=PATH|password-fd=N] [label=TEXT]: a password (CDOC2)"
        }
    }

    /// Parses command-line `key=value` arguments for this method.
    public func parse(arguments: [String]) throws -> SigningParameters {
        let parameters = try SigningParameters.parse(arguments: arguments, method: rawValue, allowed: parameterKeys)
        // The signing parser also takes a signer's role and place; they mean nothing here.
        if let stray = parameters.values.keys.first(where: { !parameterKeys.contains($0) }) {
            throw SigningParameterError("\(rawValue): unknown parameter '\(stray)' (known: \(parameterKeys.sorted().joined(separator: ", ")))")
        }
        switch self {
        case .pkcs12 where (parameters["file"] ?? "").isEmpty:
            throw SigningParameterError("pkcs12: 'file=PATH' is required (the .p12 or .pfx file)")
        case .key where (parameters["key-file"] ?? "").isEmpty:
            throw SigningParameterError("key: 'key-file=PATH' is required (a PEM or DER private key)")
        case .secret where (parameters["secret-file"] ?? "").isEmpty:
            throw SigningParameterError("secret: 'secret-file=PATH' is required (the key, base64)")
        case .idCard: try IDCardRecipientKey.validate(parameters)
        case .pkcs11: try PKCS11RecipientKey.validate(parameters)
        default: break
        }
        return parameters
    }

    /// The unlocker for these parameters. `commandLine`: a terminal may be asked and `*-fd=`
    /// descriptors are ours (false in a mount's daemon, where pinentry asks). `events`: what the
    /// card or token is doing and what the person must do (a mount shows it in `status/current`).
    public func unlocker(_ parameters: SigningParameters, configuration: Configuration, commandLine: Bool,
                         events: @escaping (SigningEvent) -> Void = { _ in }) throws -> Unlocker {
        let asker = SecretAsker(method: rawValue, parameters: parameters, configuration: configuration, commandLine: commandLine)
        switch self {
        case .idCard:
            return .key(try IDCardRecipientKey(parameters: parameters, configuration: configuration, commandLine: commandLine,
                                                 events: events))
        case .pkcs11:
            return .key(try PKCS11RecipientKey(parameters: parameters, configuration: configuration, commandLine: commandLine,
                                                 events: events))
        case .pkcs12:
            return .key(try PKCS12RecipientKey.open(file: parameters["file"] ?? "", asker: asker))
        case .key:
            return .key(try PrivateKeyFile.open(file: parameters["key-file"] ?? "", certificateFile: parameters["cert-file"], asker: asker))
        case .secret:
            return .symmetricKey(try SymmetricKeyFile.read(parameters["secret-file"] ?? ""), label: parameters["label"])
        case .password:
            let password = try asker.secret(fileKey: "password-file", descriptorKey: "password-fd",
                                            request: SecretRequest(title: "asicfs: decrypt", description: "Decrypting with a password",
                                                                   prompt: "Password"))
            return .password(password, label: parameters["label"])
        }
    }
}

/// Where one secret of a decryption method comes from: a file parameter, a descriptor parameter,
/// else the Secrets module (pinentry, else the terminal on the command line).
struct SecretAsker {
    let method: String
    let parameters: SigningParameters
    let configuration: Configuration
    let commandLine: Bool

    /// The secret from `fileKey=` or `descriptorKey=`, else asked; nil-free: throws when nothing can ask.
    func secret(fileKey: String, descriptorKey: String, request: SecretRequest) throws -> SecretBytes {
        if let file = parameters[fileKey] {
            do { return try SecretBytes.read(file: file) } catch let error as CryptoError {
                throw SigningParameterError("\(method): \(error.description)")
            }
        }
        let descriptor = try parameters.descriptor(descriptorKey, method: method, commandLine: commandLine, asking: request.prompt)
        guard let source = SecretSource.choose(descriptor: descriptor, configuration: configuration, terminalAllowed: commandLine) else {
            throw SigningParameterError("\(method): '\(fileKey)=PATH' is required here (\(SecretSource.noPrompt))")
        }
        return try source.ask(request)
    }
}

import CDOC
import Configuration
import Crypto
import PKCS11

/// A key on a PKCS#11 token (OpenSC for ID-cards, SoftHSM, USB tokens, HSMs) as the recipient of
/// an encrypted container. Token and certificate are chosen as for signing (`module=`, `label=`,
/// `slot=`, `key=`; PKCS11Selection), but among certificates for key agreement or key
/// encipherment. The PIN is asked at each operation, through the secrets module or the reader's
/// PIN pad; the token does ECDH (C_DeriveKey, CKM_ECDH1_DERIVE) or RSA unwrapping (C_Decrypt).
public final class PKCS11RecipientKey: RecipientKey {
    public static let parameterKeys: Set<String> = ["module", "label", "slot", "key", "pin-fd"]
    public static let usage = "[module=PATH] [label=TOKEN-LABEL] [slot=ID] [key=LABEL|ID-HEX] [pin-fd=N]"

    public static func validate(_ parameters: SigningParameters) throws {
        _ = try PKCS11Selection(parameters)
        _ = try parameters.descriptor("pin-fd", method: "pkcs11", commandLine: true, asking: "the PIN")
    }

    public let name: String
    public let certificate: Certificate?
    public let publicKey: PublicKey
    let token: TokenListing
    let chosen: TokenCertificate
    let pinDescriptor: Int32?
    let configuration: Configuration
    let commandLine: Bool
    let events: (SigningEvent) -> Void

    /// Finds the token and its one certificate for decryption (no PIN yet).
    public init(parameters: SigningParameters, configuration: Configuration, commandLine: Bool = true,
                events: @escaping (SigningEvent) -> Void = { _ in }) throws {
        pinDescriptor = try parameters.descriptor("pin-fd", method: "pkcs11", commandLine: commandLine, asking: "the PIN")
        let selection = try PKCS11Selection(parameters)
        let choice = try selection.choose(from: TokenInventory.scan(try selection.modules()), for: .decryption)
        guard let key = choice.certificate.certificate.publicKey else {
            throw SigningError("the certificate on the token \"\(choice.token.info.label)\" has no public key asicfs can use")
        }
        token = choice.token
        chosen = choice.certificate
        certificate = choice.certificate.certificate
        publicKey = key
        self.configuration = configuration
        self.commandLine = commandLine
        self.events = events
        name = "the token \"\(choice.token.info.label)\" (\(PKCS11Selection.subject(choice.certificate)))"
    }

    public func agree(with senderKey: PublicKey) throws -> SecretBytes {
        guard let curve = publicKey.curve, senderKey.curve == curve else {
            throw SigningError("the sender's key is not on the curve of the key on the token \"\(token.info.label)\"")
        }
        let point = try senderKey.rawKeyBytes()
        return try withPrivateKey { session, key in try session.deriveECDH(key: key, peerPoint: point) }
    }

    public func decrypt(_ wrappedKey: [UInt8], padding: RSAKeyPadding) throws -> SecretBytes {
        let mechanism: DecryptMechanism = padding == .pkcs1v15 ? .rsaPKCS : .rsaOAEPSHA256
        return try withPrivateKey { session, key in
            do { return try session.decrypt(key: key, mechanism: mechanism, data: wrappedKey) } catch let error as PKCS11Error
                where mechanism == .rsaOAEPSHA256
                    && [PKCS11Error.mechanismInvalid, PKCS11Error.mechanismParamInvalid, PKCS11Error.argumentsBad].contains(error.code ?? 0) {
                // SoftHSM 2.6, for one, does OAEP only with SHA-1.
                throw SigningError("the token \"\(token.info.label)\" cannot decrypt RSA-OAEP with SHA-256, "
                    + "which CDOC2 RSA recipients need (\(error))")
            }
        }
    }

    /// A logged-in session and the private key with the certificate's CKA_ID; logged out after.
    private func withPrivateKey(_ body: (PKCS11Session, UInt) throws -> SecretBytes) throws -> SecretBytes {
        let module = token.module
        do {
            let session = try module.openSession(slot: token.slot)
            let flags = try module.tokenInfo(slot: token.slot).flags
            if flags.contains(.userPINLocked) { throw PKCS11Error(code: PKCS11Error.pinLocked, "the PIN is locked") }
            var pin: SecretBytes? = nil
            defer { pin?.wipe() }
            if flags.contains(.protectedAuthenticationPath) {
                events(.waitingForUser("enter the PIN on the reader"))
            } else {
                pin = try askPIN(flags: flags)
            }
            try session.login(pin: pin)
            defer { session.logout() }
            events(.step("decrypting with the token \"\(token.info.label)\""))
            guard let key = try session.objects(.privateKey, id: chosen.id).first else {
                throw SigningError("the token \"\(token.info.label)\" has no private key with the id \(chosen.idHex) of the certificate")
            }
            return try body(session, key)
        } catch let error as PKCS11Error {
            throw PKCS11Failure.describe(error, token: token.info.label, flags: try? module.tokenInfo(slot: token.slot).flags,
                                         during: .decryption)
        }
    }

    /// The PIN from pin-fd, pinentry or the terminal, before the token is touched (a cancel costs no try).
    private func askPIN(flags: TokenFlags) throws -> SecretBytes {
        guard let source = SecretSource.choose(descriptor: pinDescriptor, configuration: configuration, terminalAllowed: commandLine) else {
            throw SigningParameterError("no way to ask for the PIN of the token \"\(token.info.label)\" (\(SecretSource.noPrompt)): "
                + "give pin-fd=N, or name a pinentry program that can ask (setting pinentry)")
        }
        events(.waitingForUser("PIN of the token \"\(token.info.label)\" \(source.whereToAnswer)"))
        var warning: String? = nil
        if flags.contains(.userPINFinalTry) {
            warning = "Final try: one more wrong PIN locks the token."
        } else if flags.contains(.userPINCountLow) {
            warning = "A wrong PIN was entered before: few tries are left."
        }
        let request = SecretRequest(title: "asicfs: PKCS#11 token",
                                    description: "Decrypt as \(PKCS11Selection.subject(chosen)) with the token \"\(token.info.label)\".",
                                    prompt: "PIN", error: warning, lengths: token.info.pinLengths)
        do { return try source.ask(request) } catch let error as SecretEntryError {
            switch error {
            case .cancelled: throw SigningError("\(error) (nothing was decrypted)")
            case .invalid, .unavailable: throw SigningError("\(error)")
            }
        }
    }
}

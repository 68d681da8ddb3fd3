import Configuration
import Crypto
import PKCS11

/// Signs with a key on a PKCS#11 token (USB tokens, cards read by OpenSC, SoftHSM, HSMs), found
/// through p11-kit or a module path. The token is chosen when the signer is made (no PIN yet);
/// the PIN is asked only in `sign`, after the session has accepted the certificate, through the
/// one secrets module (pin-fd, pinentry, the terminal) or typed on the reader's PIN pad.
public struct PKCS11Signer: Signer, SignerFactory {
    public let method = "pkcs11"
    public static let parameterKeys: Set<String> = ["module", "label", "slot", "key", "pin-fd"]
    public static let usage = "[module=PATH] [label=TOKEN-LABEL] [slot=ID] [key=LABEL|ID-HEX] [pin-fd=N]\n"
        + "example: echo \"label=MyToken\" > .asicfs/sign/pkcs11   ('asicfs tokens' lists tokens and certificates)"

    public static func validate(_ parameters: SigningParameters) throws {
        _ = try PKCS11Selection(parameters)
        _ = try parameters.descriptor("pin-fd", method: "pkcs11", commandLine: true, asking: "the PIN")
    }

    public static func make(_ parameters: SigningParameters, context: SignerContext) throws -> Signer {
        let pinDescriptor = try parameters.descriptor("pin-fd", method: "pkcs11", commandLine: context.commandLine, asking: "the PIN")
        let selection = try PKCS11Selection(parameters)
        let choice = try selection.choose(from: TokenInventory.scan(try selection.modules()))
        return PKCS11Signer(token: choice.token, chosen: choice.certificate, pinDescriptor: pinDescriptor,
                            configuration: context.configuration, terminalAllowed: context.commandLine)
    }

    let token: TokenListing
    let chosen: TokenCertificate
    let pinDescriptor: Int32?
    let configuration: Configuration
    let terminalAllowed: Bool

    var tokenName: String { token.info.label }

    public func certificate(events: (SigningEvent) -> Void) throws -> Certificate { chosen.certificate }
    /// CA certificates on the token: the issuer the session needs for OCSP, when it is there.
    public var extraCertificates: [Certificate] { token.otherCertificates }

    public func sign(digest: [UInt8], algorithm: SignatureAlgorithm, events: (SigningEvent) -> Void) throws -> [UInt8] {
        let module = token.module
        do {
            let session = try module.openSession(slot: token.slot)
            let flags = try module.tokenInfo(slot: token.slot).flags
            if flags.contains(.userPINLocked) {
                throw PKCS11Error(code: PKCS11Error.pinLocked, "the PIN is locked")
            }
            var pin: SecretBytes? = nil
            defer { pin?.wipe() }
            if flags.contains(.protectedAuthenticationPath) {
                events(.waitingForUser("enter the PIN on the reader"))
            } else {
                pin = try askPIN(flags: flags, events: events)
            }
            try session.login(pin: pin)
            defer { session.logout() }
            events(.step("signing with the token \"\(tokenName)\""))
            guard let key = try session.objects(.privateKey, id: chosen.id).first else {
                throw SigningError("the token \"\(tokenName)\" has no private key with the id \(chosen.idHex) of the certificate")
            }
            let alwaysAuthenticate = try session.alwaysAuthenticates(key)
            let (mechanism, data) = try Self.mechanism(algorithm, digest: digest)
            let value = try session.sign(key: key, mechanism: mechanism, data: data) {
                // Signing keys of ID cards want the PIN again for every signature.
                if alwaysAuthenticate { try session.login(pin: pin, contextSpecific: true) }
            }
            return value
        } catch let error as PKCS11Error {
            throw PKCS11Failure.describe(error, token: tokenName, flags: try? module.tokenInfo(slot: token.slot).flags)
        }
    }

    /// The PIN from pin-fd, pinentry or the terminal. Nothing has touched the token yet, so a
    /// cancel here costs no PIN try.
    private func askPIN(flags: TokenFlags, events: (SigningEvent) -> Void) throws -> SecretBytes {
        guard let source = SecretSource.choose(descriptor: pinDescriptor, configuration: configuration, terminalAllowed: terminalAllowed) else {
            throw SigningParameterError("no way to ask for the PIN of the token \"\(tokenName)\" (\(SecretSource.noPrompt)): "
                + "give pin-fd=N, or name a pinentry program that can ask (setting pinentry)")
        }
        events(.waitingForUser("PIN of the token \"\(tokenName)\" \(source.whereToAnswer)"))
        let signer = chosen.certificate.commonName ?? chosen.certificate.subjectLine
        let details = [token.info.manufacturer, token.info.model].filter { !$0.isEmpty }.joined(separator: " ")
        var warning: String? = nil
        if flags.contains(.userPINFinalTry) {
            warning = "Final try: one more wrong PIN locks the token."
        } else if flags.contains(.userPINCountLow) {
            warning = "A wrong PIN was entered before: few tries are left."
        }
        let request = SecretRequest(title: "asicfs: PKCS#11 token",
                                    description: "Sign as \(signer) with the token \"\(tokenName)\""
                                        + (details.isEmpty ? "" : " (\(details))") + ".",
                                    prompt: "PIN", error: warning, lengths: token.info.pinLengths)
        do { return try source.ask(request) } catch let error as SecretEntryError {
            switch error {
            case .cancelled: throw SigningError("\(error) (nothing was signed)")
            case .invalid, .unavailable: throw SigningError("\(error)")
            }
        }
    }

    /// What to hand the token: EC signs the digest (raw r||s back); RSA PKCS#1 v1.5 signs a
    /// DigestInfo (CKM_RSA_PKCS pads only); RSA-PSS signs the digest with its parameters.
    static func mechanism(_ algorithm: SignatureAlgorithm, digest: [UInt8]) throws -> (SignMechanism, [UInt8]) {
        switch algorithm.scheme {
        case .ecdsa: return (.ecdsa, digest)
        case .rsaPSS: return (.rsaPSS(algorithm.digest), digest)
        case .rsaPKCS1:
            guard let prefix = algorithm.digest.digestInfoPrefix else {
                throw SigningError("RSA signing with \(algorithm.digest.rawValue) is not supported")
            }
            return (.rsaPKCS, prefix + digest)
        }
    }
}

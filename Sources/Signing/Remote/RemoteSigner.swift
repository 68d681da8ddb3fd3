import Configuration
import Crypto
import Foundation
import Synchronization

/// Signs with a key kept by a remote signing service over the CSC API v1 (a QTSP's server
/// signing): `credentials/info` gives the certificate and its chain; the signature is authorised
/// (`credentials/authorize`: the PIN for an explicit credential, the hash itself with SCAL 2) and
/// made (`signatures/signHash`) over the digest the session computed. The session checks the
/// value against the certificate before anything is written.
public final class RemoteSigner: Signer, SignerFactory {
    public let method = "remote"
    public static let parameterKeys: Set<String> = ["credential", "pin-fd"]
    public static let usage = "[credential=ID] [pin-fd=N]  (the service: remote.url and the other remote.* settings)\n"
        + "example: echo \"credential=my-signing-key\" > .asicfs/sign/remote"

    public static func validate(_ parameters: SigningParameters) throws {
        if let id = parameters["credential"],
           id.isEmpty || id.count > 255 || id.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw SigningParameterError("remote: credential= takes a credential ID of the service (asicfs remote credentials lists them)")
        }
        _ = try parameters.descriptor("pin-fd", method: "remote", commandLine: true, asking: "the PIN")
    }

    /// The service's address and pin: a mount refuses the request at the write without them.
    public static func checkSettings(_ configuration: Configuration) throws {
        do { _ = try RemoteSettings(configuration) } catch { throw SigningParameterError("\(error)") }
    }

    /// Without `credential=`, the account's only credential; with several, a parameter error
    /// listing them (exit 2, EINVAL in a mount) before anything is authorised.
    public static func make(_ parameters: SigningParameters, context: SignerContext) throws -> Signer {
        let pinDescriptor = try parameters.descriptor("pin-fd", method: "remote", commandLine: context.commandLine, asking: "the PIN")
        let client = try RemoteClient(context: context)
        var credential = parameters["credential"]
        if credential == nil {
            let ids = try client.credentialIDs()
            switch ids.count {
            case 0: throw RemoteFailure.error("the account at \(client.host) has no signing credentials")
            case 1: credential = ids[0]
            default:
                client.logout()
                throw SigningParameterError("remote: the account at \(client.host) has \(ids.count) credentials; choose one "
                    + "with credential=ID: \(ids.map(RemoteFailure.printable).joined(separator: ", "))")
            }
        }
        return RemoteSigner(client: client, credential: credential!, pinDescriptor: pinDescriptor,
                            context: context)
    }

    let client: RemoteClient
    let credential: String
    let pinDescriptor: Int32?
    let context: SignerContext
    private let chosen = Mutex<(info: CSCCredentialInfo, certificate: Certificate, chain: [Certificate])?>(nil)

    init(client: RemoteClient, credential: String, pinDescriptor: Int32?, context: SignerContext) {
        self.client = client
        self.credential = credential
        self.pinDescriptor = pinDescriptor
        self.context = context
    }

    public func certificate(events: (SigningEvent) -> Void) throws -> Certificate {
        if let known = chosen.withLock({ $0 }) { return known.certificate }
        events(.step("asking \(client.host) for the certificate of the credential \(credential)"))
        let info = try client.credentialInfo(credential)
        guard info.key.status == "enabled" else {
            throw RemoteFailure.error("the credential '\(credential)' is \(RemoteFailure.printable(info.key.status)) at the service")
        }
        let certificates = try (info.cert.certificates ?? []).map { text in
            guard let der = Data(base64Encoded: text), let certificate = try? Certificate(der: Array(der)) else {
                throw RemoteFailure.unreadable("credentials/info", "a certificate that is not Base64 DER")
            }
            return certificate
        }
        guard let certificate = certificates.first else {
            throw RemoteFailure.unreadable("credentials/info", "no certificate for the credential '\(credential)'")
        }
        chosen.withLock { $0 = (info, certificate, Array(certificates.dropFirst())) }
        return certificate
    }

    /// The chain from `credentials/info`: the issuer is known without trust anchors.
    public var extraCertificates: [Certificate] { chosen.withLock { $0?.chain ?? [] } }

    public func algorithm(for certificate: Certificate) -> SignatureAlgorithm {
        CSCAlgorithm.preferred(for: certificate.publicKey, supported: chosen.withLock { $0?.info.key.algo ?? [] })
    }

    public func sign(digest: [UInt8], algorithm: SignatureAlgorithm, events: (SigningEvent) -> Void) throws -> [UInt8] {
        guard let (info, certificate, _) = chosen.withLock({ $0 }) else {
            throw RemoteFailure.error("the credential's certificate was not read first")
        }
        defer { client.logout() }
        guard let cscAlgorithm = CSCAlgorithm.choose(algorithm, supported: info.key.algo) else {
            throw RemoteFailure.error("the credential '\(credential)' cannot make \(algorithm) signatures "
                + "(its key offers \(info.key.algo.map(RemoteFailure.printable).joined(separator: ", ")))")
        }
        guard info.authMode == "implicit" || info.isExplicit else {
            throw RemoteFailure.error("the credential '\(credential)' is authorised by \(RemoteFailure.printable(info.authMode)), "
                + "which asicfs does not support (implicit and explicit PIN are)")
        }
        if info.isExplicit && CSCCredentialInfo.needed(info.otp) {
            throw RemoteFailure.error("the credential '\(credential)' needs a one-time password, which asicfs does not support yet")
        }
        let pin = info.isExplicit && CSCCredentialInfo.needed(info.pin) ? try askPIN(info, certificate, events) : nil
        defer { pin?.wipe() }
        if context.cancellation.isCancelled { throw RemoteFailure.cancelled }

        if info.isExplicit {
            events(.step("authorizing the signature at \(client.host)"))
        } else {
            events(.waitingForUser("approve the signing as \(client.host) asks you to (up to \(RemoteFailure.seconds(client.settings.timeout)) s)"))
        }
        let authorization = try client.authorize(credential, hashes: info.bindsHashes ? [digest] : nil, pin: pin)
        let sad = SecretBytes(Array(authorization.sad.utf8))
        defer { sad.wipe() }
        events(.step("signing at \(client.host)"))
        let values = try client.signHash(credential, sad: sad, hashes: [digest], algorithm: cscAlgorithm)
        guard values.count == 1 else {
            throw RemoteFailure.error(values.isEmpty ? "the service returned no signature (an empty signatures list)"
                : "the service returned \(values.count) signatures for one hash")
        }
        guard let value = Data(base64Encoded: values[0]), !value.isEmpty else {
            throw RemoteFailure.unreadable("signatures/signHash", "a signature that is not Base64")
        }
        guard let xmlValue = cscAlgorithm.xmlValue(Array(value), key: certificate.publicKey) else {
            throw RemoteFailure.unreadable("signatures/signHash", cscAlgorithm.plainECDSA
                ? "a plain ECDSA value of the wrong length" : "an ECDSA value that is not a DER Ecdsa-Sig-Value")
        }
        return xmlValue
    }

    /// The credential's PIN, from `pin-fd=`, pinentry or (command line) the terminal.
    private func askPIN(_ info: CSCCredentialInfo, _ certificate: Certificate, _ events: (SigningEvent) -> Void) throws -> SecretBytes {
        guard let source = SecretSource.choose(descriptor: pinDescriptor, configuration: context.configuration,
                                               terminalAllowed: context.commandLine) else {
            throw RemoteFailure.error(context.commandLine
                ? "no way to ask for the PIN (\(SecretSource.noPrompt)); give pin-fd=N"
                : "no way to ask for the PIN in a mount: install pinentry (or set pinentry = PROGRAM)")
        }
        let label = info.pin?.label.map(RemoteFailure.printable) ?? "PIN"
        let name = certificate.commonName ?? certificate.subjectLine
        events(.waitingForUser("enter the \(label) of the credential \(credential) (\(source.whereToAnswer))"))
        let request = SecretRequest(title: "asicfs: remote signing",
                                    description: "Sign with the credential \(credential) (\(name)) at \(client.host)",
                                    prompt: label, lengths: 1...256, digitsOnly: info.pin?.format == "N")
        do { return try source.ask(request) } catch let error as SecretEntryError {
            if case .cancelled = error { throw RemoteFailure.error("\(label) entry was cancelled; nothing was authorised") }
            throw RemoteFailure.error(error.description)
        }
    }

    // MARK: - Listing

    /// One credential of the account, as `asicfs remote credentials` shows it.
    public struct CredentialSummary: Sendable {
        public let id: String
        public let description: String?
        public let certificate: Certificate?
        public let keyStatus: String
        public let keyAlgorithm: String
        public let authMode: String
        public let scal: String
        public let pinFormat: String?
        public let multisign: Int
    }

    /// Every credential of the account with its certificate and how it is authorised. Never
    /// authorises anything or asks for a PIN.
    public static func credentials(context: SignerContext) throws -> (host: String, credentials: [CredentialSummary]) {
        let client = try RemoteClient(context: context)
        defer { client.logout() }
        let summaries = try client.credentialIDs().map { id -> CredentialSummary in
            let info = try client.credentialInfo(id)
            let certificate = (info.cert.certificates?.first).flatMap { Data(base64Encoded: $0) }.flatMap { try? Certificate(der: Array($0)) }
            return CredentialSummary(id: id, description: info.description, certificate: certificate, keyStatus: info.key.status,
                                     keyAlgorithm: keyAlgorithm(certificate?.publicKey, info.key), authMode: info.authMode,
                                     scal: info.scal?.text ?? "1",
                                     pinFormat: info.isExplicit && CSCCredentialInfo.needed(info.pin) ? (info.pin?.format ?? "A") : nil,
                                     multisign: info.multisign ?? 1)
        }
        return (client.host, summaries)
    }

    /// "EC P-384", "RSA 2048": from the certificate's key, else from the service's key.len.
    static func keyAlgorithm(_ key: PublicKey?, _ info: CSCCredentialInfo.Key) -> String {
        if let key { return key.isEC ? "EC P-\(key.bits)" : key.isRSA ? "RSA \(key.bits)" : "\(key.bits)-bit key" }
        return info.len.map { "\($0)-bit key" } ?? "unknown key"
    }
}

import Configuration
import Crypto
import Foundation
import HTTP

/// The `remote.*` settings of a CSC signing service, checked before anything is sent: the base
/// URL (up to and including `/csc/v1`), the pinned TLS certificate, the PKCS#12 client identity,
/// the login and the timeout of one call.
struct RemoteSettings {
    static let defaultTimeout = 120.0

    let url: String
    let host: String
    let pinnedCertificate: String
    let identityFile: String?
    let identityPassphraseFile: String?
    let username: String?
    let passwordFile: String?
    /// Seconds one call may take (an implicit authorization waits for the user at the service).
    let timeout: Double

    init(_ configuration: Configuration) throws {
        guard var url = configuration["remote.url"], !url.isEmpty else {
            throw RemoteFailure.error("set remote.url to the service's CSC API address (up to and including /csc/v1)")
        }
        while url.hasSuffix("/") { url.removeLast() }
        guard url.lowercased().hasPrefix("https://"), let host = URLComponents(string: url)?.host, !host.isEmpty else {
            throw RemoteFailure.error("remote.url must be an https:// URL, not '\(RemoteFailure.printable(url))'")
        }
        guard let pin = configuration["remote.tls-cert"], !pin.isEmpty else {
            throw RemoteFailure.error("set remote.tls-cert to a PEM file with the TLS certificate of \(host) or its CA: "
                + "asicfs does not talk to a signing service unpinned")
        }
        self.url = url
        self.host = host
        pinnedCertificate = pin
        identityFile = configuration["remote.client-identity"].flatMap { $0.isEmpty ? nil : $0 }
        identityPassphraseFile = configuration["remote.client-identity-passphrase-file"].flatMap { $0.isEmpty ? nil : $0 }
        username = configuration["remote.username"].flatMap { $0.isEmpty ? nil : $0 }
        passwordFile = configuration["remote.password-file"].flatMap { $0.isEmpty ? nil : $0 }
        if let username, username.contains(":") || username.unicodeScalars.contains(where: { $0.value < 0x20 }) {
            throw RemoteFailure.error("remote.username cannot hold ':' or control characters (HTTP Basic)")
        }
        timeout = configuration["remote.timeout"].flatMap(Double.init) ?? Self.defaultTimeout
    }

    /// The client identity, opened with its passphrase (from the file, else asked through the
    /// secrets module); nil when none is configured. The passphrase is wiped once the file is open.
    func clientIdentity(_ context: SignerContext) throws -> RemoteTLSIdentity? {
        guard let file = identityFile else { return nil }
        let name = file.split(separator: "/").last.map(String.init) ?? file
        guard let data = FileManager.default.contents(atPath: file) else {
            throw RemoteFailure.error("cannot read the client identity \(file) (remote.client-identity)")
        }
        let passphrase = try secret(file: identityPassphraseFile, setting: "remote.client-identity-passphrase-file", context,
                                    SecretRequest(title: "asicfs: remote signing", description: "Open the TLS client identity \(name) for \(host)",
                                                  prompt: "Passphrase"))
        defer { passphrase.wipe() }
        do {
            return RemoteTLSIdentity(identity: try PKCS12Identity(bytes: Array(data), passphrase: passphrase, name: name))
        } catch let error as CryptoError where error.description.hasPrefix("wrong passphrase") {
            throw RemoteFailure.error("wrong passphrase for the TLS client identity \(name) (remote.client-identity); nothing was sent")
        } catch let error as CryptoError {
            throw RemoteFailure.error("the TLS client identity \(name): \(error.description)")
        }
    }

    /// The login's password, from `remote.password-file` or asked; nil without `remote.username`.
    func password(_ context: SignerContext) throws -> SecretBytes? {
        guard let username else { return nil }
        return try secret(file: passwordFile, setting: "remote.password-file", context,
                          SecretRequest(title: "asicfs: remote signing", description: "Log in to \(host) as \(username)", prompt: "Password"))
    }

    /// A secret from its file (first line), else from pinentry or (command line) the terminal.
    private func secret(file: String?, setting: String, _ context: SignerContext, _ request: SecretRequest) throws -> SecretBytes {
        if let file {
            do { return try SecretBytes.read(file: file) } catch let error as CryptoError {
                throw RemoteFailure.error("\(error.description) (\(setting))")
            }
        }
        guard let source = SecretSource.choose(descriptor: nil, configuration: context.configuration,
                                               terminalAllowed: context.commandLine) else {
            throw RemoteFailure.error("no way to ask for the \(request.prompt.lowercased()): set \(setting) "
                + "(or install pinentry, setting pinentry)")
        }
        do { return try source.ask(request) } catch let error as SecretEntryError {
            throw RemoteFailure.error("\(error.description); nothing was sent")
        }
    }
}

/// A PKCS#12 identity presented as the TLS client certificate: installed into curl's OpenSSL
/// context by the HTTP client (curl never sees the file or its passphrase).
struct RemoteTLSIdentity: TLSClientIdentity {
    let identity: PKCS12Identity

    func install(into sslContext: UnsafeMutableRawPointer) -> Bool {
        identity.installTLSClient(into: sslContext)
    }
}

import Configuration
import Crypto
import Foundation
import HTTP
import Synchronization

/// The CSC API v1 calls remote signing makes, over TLS pinned to `remote.tls-cert` and, when
/// configured, with a PKCS#12 client certificate. With `remote.username` the calls carry the
/// bearer token of an `auth/login` (HTTP Basic); without it the service knows the caller by
/// the client certificate (authType TLS) and no token is sent. Secrets (the password, the token,
/// PINs, SADs) travel in wiped buffers that curl copies.
final class RemoteClient: Sendable {
    let settings: RemoteSettings
    private let http: HTTPClient
    private let password: SecretBytes?
    private let token = Mutex<SecretBytes?>(nil)

    /// Reads the settings, opens the client identity and reads the password; sends nothing.
    init(context: SignerContext) throws {
        settings = try RemoteSettings(context.configuration)
        let identity = try settings.clientIdentity(context)
        password = try settings.password(context)
        var options = HTTPClient.Options(version: asicfsVersion, pinnedCertificates: [.pemFile(settings.pinnedCertificate)],
                                         cancellation: context.cancellation, maxResponseSize: 4 << 20)
        options.clientIdentity = identity
        options.clientCertificateMayBeRequired = true
        if let proxy = context.configuration["proxy"] { options.proxy = .url(proxy) }
        do { http = try HTTPClient(options) } catch { throw RemoteFailure.error("remote.tls-cert: \(error)") }
    }

    deinit { password?.wipe() }

    var host: String { settings.host }

    // MARK: - Calls

    /// Every credential ID of the account, page after page (`nextPageToken`).
    func credentialIDs() throws -> [String] {
        var ids: [String] = []
        var pageToken: String? = nil
        var seen = Set<String>()
        repeat {
            let members: [(String, RemoteRequestBody.Value)] = pageToken.map { [("pageToken", .text($0))] } ?? []
            let page: CSCCredentialList = try call("credentials/list", members)
            ids += page.credentialIDs
            pageToken = page.nextPageToken.flatMap { $0.isEmpty ? nil : $0 }
            // A service that hands out the same page token again would keep us here for ever.
            if let token = pageToken, !seen.insert(token).inserted || seen.count > 1000 {
                throw RemoteFailure.unreadable("credentials/list", "its nextPageToken repeats")
            }
        } while pageToken != nil
        return ids
    }

    /// The credential's key, certificate chain and authorization mode.
    func credentialInfo(_ id: String) throws -> CSCCredentialInfo {
        try call("credentials/info", [("credentialID", .text(id)), ("certificates", .text("chain")),
                                      ("certInfo", .flag(true)), ("authInfo", .flag(true))], credential: id)
    }

    /// The SAD for one signature; SCAL 2 binds it to `hashes`; explicit credentials need `pin`.
    func authorize(_ id: String, hashes: [[UInt8]]?, pin: SecretBytes?) throws -> CSCAuthorization {
        var members: [(String, RemoteRequestBody.Value)] = [("credentialID", .text(id)), ("numSignatures", .number(1))]
        if let hashes { members.append(("hash", .texts(hashes.map { Data($0).base64EncodedString() }))) }
        if let pin { members.append(("PIN", .secret(pin))) }
        return try call("credentials/authorize", members, credential: id)
    }

    /// The signature values of `hashes`, in their order.
    func signHash(_ id: String, sad: SecretBytes, hashes: [[UInt8]], algorithm: CSCAlgorithm) throws -> [String] {
        var members: [(String, RemoteRequestBody.Value)] = [
            ("credentialID", .text(id)), ("SAD", .secret(sad)),
            ("hash", .texts(hashes.map { Data($0).base64EncodedString() })), ("signAlgo", .text(algorithm.signAlgo)),
        ]
        if let hashAlgo = algorithm.hashAlgo { members.append(("hashAlgo", .text(hashAlgo))) }
        let answer: CSCSignatures = try call("signatures/signHash", members, credential: id)
        return answer.signatures
    }

    /// Ends the login (`auth/revoke`), if there is one; failures do not matter any more.
    func logout() {
        guard let current = token.withLock({ $0 }) else { return }
        _ = try? send("auth/revoke", RemoteRequestBody.encode([("token", .secret(current)), ("token_type_hint", .text("access_token"))]))
        token.withLock {
            $0?.wipe()
            $0 = nil
        }
    }

    // MARK: - Transport

    /// POSTs `members` to `method` (logging in first when a username is set) and decodes the 2xx answer.
    private func call<Answer: Decodable>(_ method: String, _ members: [(String, RemoteRequestBody.Value)],
                                         credential: String? = nil) throws -> Answer {
        if settings.username != nil { try login() }
        let body = RemoteRequestBody.encode(members)
        defer { body.wipe() }
        let bytes = try send(method, body, credential: credential)
        do { return try JSONDecoder().decode(Answer.self, from: Data(bytes)) } catch {
            throw RemoteFailure.unreadable(method, Self.missing(error))
        }
    }

    /// `auth/login` with HTTP Basic, once: the token is kept (wiped) for the following calls.
    private func login() throws {
        guard token.withLock({ $0 == nil }), let username = settings.username, let password else { return }
        let body = RemoteRequestBody.encode([])
        let bytes = try send("auth/login", body, basic: (username, password))
        let answer: CSCLogin
        do { answer = try JSONDecoder().decode(CSCLogin.self, from: Data(bytes)) } catch {
            throw RemoteFailure.unreadable("auth/login", Self.missing(error))
        }
        token.withLock { $0 = SecretBytes(Array(answer.accessToken.utf8)) }
    }

    private func send(_ method: String, _ body: SecretBytes, credential: String? = nil,
                      basic: (String, SecretBytes)? = nil) throws -> [UInt8] {
        let request = HTTPRequest(url: settings.url + "/" + method, method: .post, contentType: "application/json",
                                  accept: "application/json", timeout: settings.timeout,
                                  connectTimeout: min(10, settings.timeout))
        let bearer = basic == nil ? token.withLock({ $0 }) : nil
        do {
            let response = try body.withBytes { bytes -> HTTPResponse in
                if let (user, password) = basic {
                    return try password.withCString { try http.send(request, body: bytes, authorization: .basic(user: user, password: $0)) }
                }
                if let bearer {
                    return try bearer.withCString { try http.send(request, body: bytes, authorization: .bearer($0)) }
                }
                return try http.send(request, body: bytes)
            }
            return response.body
        } catch let failure as HTTPError {
            if case .status(_, let response) = failure {
                throw RemoteFailure.status(response.status, body: response.body, method: method, credential: credential,
                                           loggedIn: bearer != nil)
            }
            throw RemoteFailure.transport(failure, host: settings.host, timeout: settings.timeout)
        }
    }

    /// Which member a decoding error is about, for the message.
    static func missing(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "no '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "'\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type"
        default: "not the JSON object the CSC API describes"
        }
    }
}

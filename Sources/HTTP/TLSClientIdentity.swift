/// A TLS client certificate and its key, presented when a server asks for one (mutual TLS). The
/// HTTP client hands libcurl's OpenSSL context to `install` (CURLOPT_SSL_CTX_FUNCTION) instead of
/// giving curl a file and a passphrase: curl copies option strings and keeps them until the
/// handle is freed, so this way no passphrase ever reaches curl.
public protocol TLSClientIdentity: Sendable {
    /// Puts the key, its certificate and any chain certificates into `sslContext` (an OpenSSL
    /// `SSL_CTX *`). False when OpenSSL refused them; the handshake is then not attempted.
    func install(into sslContext: UnsafeMutableRawPointer) -> Bool
}

/// Credentials libcurl turns into the Authorization header itself, borrowed for one `send`:
/// curl copies them into its handle (freed with it), so the caller keeps the only long-lived
/// copy in memory it wipes, and no header string of ours ever holds them.
public enum HTTPAuthorization {
    /// HTTP Basic (`user:password` in Base64), e.g. a CSC `auth/login`.
    case basic(user: String, password: UnsafePointer<CChar>)
    /// `Authorization: Bearer <token>`.
    case bearer(UnsafePointer<CChar>)
}

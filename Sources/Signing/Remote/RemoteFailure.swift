import Foundation
import HTTP

/// Every way remote signing can end badly, as the one sentence the user reads. The CSC API
/// answers errors with HTTP 400 `invalid_request` and an `error_description` (Assina's texts, the
/// ones the spec's §8 lists); the ones a user can act on get their own sentence, the rest are
/// quoted.
enum RemoteFailure {
    static let prefix = "remote signing: "

    static func error(_ sentence: String) -> SigningError { SigningError(prefix + sentence) }

    static let cancelled = SigningError("the signing was cancelled; the container is unchanged")

    /// A transfer that did not get an answer.
    static func transport(_ failure: HTTPError, host: String, timeout: Double) -> SigningError {
        switch failure {
        case .cancelled:
            return cancelled
        case .timedOut:
            return error("the service at \(host) did not answer within \(seconds(timeout)) s (remote.timeout)")
        case .certificateNotPinned:
            return error("the TLS certificate of \(host) is not the one pinned in remote.tls-cert; nothing was sent")
        case .clientCertificate(_, presented: false, _):
            return error("the service at \(host) requires a TLS client certificate: set remote.client-identity (a .p12 file) "
                + "and remote.client-identity-passphrase-file")
        case .clientCertificate(_, presented: true, let message):
            return error("the service at \(host) refused the TLS client certificate of remote.client-identity (\(printable(message)))")
        case .cannotConnect(_, let message):
            return error("cannot connect to \(host) (\(printable(message))): check remote.url")
        default:
            return error(printable(failure.description))
        }
    }

    /// A non-2xx answer to `method` (e.g. `credentials/authorize`).
    static func status(_ status: Int, body: [UInt8], method: String, credential: String?, loggedIn: Bool) -> SigningError {
        let answer = try? JSONDecoder().decode(CSCError.self, from: Data(body))
        let description = answer?.description.map(printable) ?? ""
        let quoted = answer.map { ": \(printable($0.error))" + (description.isEmpty ? "" : " \(description)") } ?? ""
        switch (status, description) {
        case (401, _) where method == "auth/login":
            return error("the service refused the user name or password (remote.username, remote.password-file; HTTP 401\(quoted))")
        case (401, _) where loggedIn:
            return error("the service refused the access token of the login (HTTP 401\(quoted))")
        case (401, _):
            return error("the service wants to know who signs (HTTP 401\(quoted)): set remote.username and "
                + "remote.password-file, or a TLS client identity it accepts (remote.client-identity)")
        case (400, "Invalid parameter credentialID"):
            return error("the service has no credential '\(printable(credential ?? ""))' for this account "
                + "(asicfs remote credentials lists them)")
        case (400, "The PIN is invalid"):
            return error("wrong PIN for the credential '\(printable(credential ?? ""))'; the container is unchanged")
        case (400, "PIN locked"):
            return error("the PIN of the credential '\(printable(credential ?? ""))' is locked at the service")
        case (400, "The OTP is invalid"):
            return error("wrong one-time password for the credential '\(printable(credential ?? ""))'")
        case (400, "SAD expired"):
            return error("the service's authorization (SAD) expired before the signature was made; sign again")
        case (400, _):
            return error("the service refused \(method) (HTTP 400\(quoted))")
        case (404, _), (405, _):
            return error("the service does not offer \(method) (HTTP \(status)): check remote.url (it ends with /csc/v1)")
        case (500...599, _):
            return error("the service failed on \(method) (HTTP \(status)\(quoted)); try again later")
        default:
            return error("\(method) answered HTTP \(status)\(quoted)")
        }
    }

    static func unreadable(_ method: String, _ what: String) -> SigningError {
        error("the service's answer to \(method) cannot be read (\(what))")
    }

    /// Text from the service, safe to show: one line, at most 160 characters.
    static func printable(_ text: String) -> String {
        let line = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
        return line.count > 160 ? line.prefix(160) + "…" : line
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

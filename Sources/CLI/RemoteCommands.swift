import ASiC
import Foundation
import HTTP
import Signing

let remoteCommand = Command(
    name: "remote",
    synopsis: "remote credentials [--json]",
    summary: "the remote signing service (CSC API): the account's credentials",
    details: """
    Subcommands:
      credentials [--json]              every credential of the account (all pages of
                                        credentials/list), each with its certificate's subject and
                                        issuer, key algorithm, validity, authorization mode
                                        (implicit, or explicit with a PIN) and SCAL. Listing never
                                        authorizes, signs or asks for a PIN.
    Sign with one: asicfs sign CONTAINER --method remote credential=ID [pin-fd=N].
    Settings: remote.url (up to and including /csc/v1), remote.tls-cert (required: the pinned
    TLS certificate of the service), remote.client-identity and
    remote.client-identity-passphrase-file (a PKCS#12 TLS client certificate; without the file
    the passphrase is asked), remote.username and remote.password-file (auth/login with HTTP
    Basic; without a username the client certificate identifies you), remote.timeout (seconds
    per call, default 120), proxy.
    """,
    options: [jsonOption],
    run: { arguments, context in
        guard let subcommand = arguments.positionals.first else { throw UsageError("missing subcommand: credentials") }
        guard subcommand == "credentials" else {
            throw UsageError("unknown remote subcommand '\(subcommand)' (one of credentials)")
        }
        if arguments.positionals.count > 1 { throw UsageError("remote credentials takes no arguments") }
        let environment = SignerContext(environment: try SignatureEnvironment(configuration: context.configuration),
                                        cancellation: Cancellation())
        let (host, credentials) = try RemoteSigner.credentials(context: environment)
        if arguments.has("--json") {
            CommandJSON.success("remote credentials", container: nil, ["service": .text(host), "credentials": .list(credentials.map(credentialJSON))])
            return 0
        }
        if credentials.isEmpty { Terminal.out("no credentials at \(host)") }
        for credential in credentials {
            let certificate = credential.certificate
            Terminal.out(PrintableText.escaped(credential.id))
            Terminal.out("  subject          \(PrintableText.escaped(certificate?.subjectLine ?? "(no certificate)"))")
            Terminal.out("  issuer           \(PrintableText.escaped(certificate?.issuerLine ?? "(no certificate)"))")
            Terminal.out("  key              \(credential.keyAlgorithm) (\(PrintableText.escaped(credential.keyStatus)))")
            Terminal.out("  valid            \(certificate?.notBefore.map(Format.isoDate) ?? "?") to \(certificate?.notAfter.map(Format.isoDate) ?? "?")")
            Terminal.out("  authorization    \(authorization(credential))")
            if let description = credential.description, !description.isEmpty {
                Terminal.out("  description      \(PrintableText.escaped(description))")
            }
        }
        return 0
    })

/// "explicit (numeric PIN), SCAL 2" / "implicit (the service asks you), SCAL 1".
private func authorization(_ credential: RemoteSigner.CredentialSummary) -> String {
    var text = PrintableText.escaped(credential.authMode)
    if let format = credential.pinFormat { text += format == "N" ? " (numeric PIN)" : " (PIN)" }
    if credential.authMode == "implicit" { text += " (the service asks you)" }
    text += ", SCAL \(PrintableText.escaped(credential.scal))"
    if credential.multisign > 1 { text += ", \(credential.multisign) signatures per authorization" }
    return text
}

private func credentialJSON(_ credential: RemoteSigner.CredentialSummary) -> CommandJSON.Value {
    let certificate = credential.certificate
    return .object([
        "id": .text(credential.id), "description": credential.description.map { .text($0) } ?? .null,
        "subject": certificate.map { .text($0.subjectLine) } ?? .null, "issuer": certificate.map { .text($0.issuerLine) } ?? .null,
        "serial": certificate.map { .text($0.serialDecimal) } ?? .null,
        "not_before": certificate?.notBefore.map { .text(Format.isoDate($0)) } ?? .null,
        "not_after": certificate?.notAfter.map { .text(Format.isoDate($0)) } ?? .null,
        "key_algorithm": .text(credential.keyAlgorithm), "key_status": .text(credential.keyStatus),
        "auth_mode": .text(credential.authMode), "scal": .text(credential.scal),
        "pin": credential.pinFormat.map { .text($0 == "N" ? "numeric" : "alphanumeric") } ?? .null,
        "multisign": .number(credential.multisign), "pem": certificate.map { .text($0.pem) } ?? .null,
    ])
}

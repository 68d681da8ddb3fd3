import Configuration
import ASiC
import Crypto
import Foundation
import HTTP
import Signing
import Validation

let signCommand = Command(
    name: "sign",
    synopsis: "sign CONTAINER --method METHOD [KEY=VALUE...]",
    summary: "add a signature (XAdES LT: time-stamp and OCSP)",
    details: """
    The parameters are the ones the control files of a mount take (see asicfs(1)):
    \(SigningMethod.allCases.map { "  " + $0.commandLineUsage.split(separator: "\n")[0] }.joined(separator: "\n"))
    Every method also takes role= (repeatable), city=, state=, postal-code= and country=
    (signer role and production place), except that smart-id's country= is the person's
    country (EE, LV or LT), not a place.
    Without passphrase-file= the pkcs12 method has the passphrase asked by pinentry (setting
    pinentry), else on the terminal; id-card asks PIN2 the same way unless pin-fd=N names a
    descriptor to read it from (or the reader has a PIN pad and there is no pinentry).
    The pkcs11 method finds tokens through p11-kit (or module=PATH; 'asicfs tokens' lists them
    and their certificates); without label=, slot= or key= the one certificate with
    non-repudiation is used. Its PIN comes from pin-fd=N, else the pinentry program (setting
    pinentry), else the terminal; a reader with a PIN pad takes it there.
    The signature is checked before it is written; if anything fails the container stays
    exactly as it was. Ctrl-C cancels.
    smart-id qr=yes (RP API v3) needs no personal code: the terminal shows a QR code, redrawn
    each second with the elapsed time, to scan with the Smart-ID app (with --json, one
    device_link event a second); the signature then needs only PIN2, without a code. In v3 the
    verification code of country=/idcode= or document= signing comes from the service.
    Settings (see asicfs --help): tsa-url, ocsp-url, profile (LT or B), tsl, tsl-cert,
    tsl-signer-sha256, trust-anchors, cache-dir, proxy, pinentry; for mobile-id:
    mobile-id.tls-cert (required but for SK's hosts, which have built-in key pins),
    mobile-id.url, mobile-id.relying-party-uuid, mobile-id.relying-party-name,
    mobile-id.timeout (default 150 s); for smart-id: smart-id.tls-cert (as mobile-id's),
    smart-id.url, smart-id.relying-party-uuid, smart-id.relying-party-name, smart-id.timeout
    (default 180 s), smart-id.api (v3, the default, or v2; v2 also when smart-id.url ends in
    /v2), smart-id.signature-algorithm (v3: pss, the default, or pkcs1 for validators without
    RSA-PSS), smart-id.scheme-name (v3 device links: smart-id-demo, or smart-id on SK's
    production service); notify (desktop notification of the verification code); for remote:
    remote.url (the CSC API, up to /csc/v1), remote.tls-cert (required), remote.client-identity
    and remote.client-identity-passphrase-file (TLS client certificate), remote.username and
    remote.password-file (login), remote.timeout (default 120 s); 'asicfs remote credentials'
    lists the credentials. A remote credential's PIN comes from pin-fd=N, else pinentry,
    else the terminal.
    """,
    options: [OptionSpec(names: ["-m", "--method"], takesValue: true, help: "mobile-id, smart-id, id-card, pkcs11, pkcs12 or remote"),
              jsonOption],
    run: { arguments, context in
        try requirePositionals(arguments, atLeast: 1, "CONTAINER")
        guard let name = arguments.value("--method") else { throw UsageError("missing --method") }
        guard let method = SigningMethod(rawValue: name) else {
            let names = SigningMethod.allCases.map(\.rawValue)
            let suggestion = Suggestion.closest(to: name, among: names).map { "; did you mean '\($0)'?" } ?? ""
            throw UsageError("unknown method '\(name)'\(suggestion) (one of \(names.joined(separator: ", ")))")
        }
        let parameters: SigningParameters
        do { parameters = try method.parse(arguments: Array(arguments.positionals.dropFirst())) } catch let error as SigningParameterError {
            throw UsageError(error.description)
        }
        let path = arguments.positionals[0]
        // One writer at a time: not while the container is mounted or another command changes it.
        let lock = try lockForChange(path)
        defer { lock.release() }
        let container = try Container.open(path)
        let environment = try SignatureEnvironment(configuration: context.configuration)
        let cancellation = Cancellation()
        let signer = try makeSigner(method, parameters, SignerContext(environment: environment, cancellation: cancellation))
        // Ctrl-C (or SIGTERM) cancels: the session stops at its next step or network wait and the
        // container stays as it was; a second Ctrl-C ends the process at once.
        let interruption = CancelOnSignals(cancellation)
        defer { interruption.restore() }
        let progress = ProgressLine("signing \(path)", quiet: context.quiet)
        defer { progress.finish() }
        let qrDisplay = SmartIDQRDisplay(json: arguments.has("--json"))
        let outcome = try SigningSession(container: container, signer: signer, environment: environment,
                                         details: method.signerDetails(parameters), cancellation: cancellation).run { event in
            switch event {
            case .step(let text): progress.message(text)
            case .verificationCode(let code):
                progress.finish()
                // With --json the code is an event line of its own, printed at once: a script shows it while it waits.
                if arguments.has("--json") {
                    CommandJSON.event("sign", "verification_code", ["verification_code": .text(code)])
                } else {
                    Terminal.out("verification code: \(code) (sign only if your phone shows the same code)")
                }
                DesktopNotification.verificationCode(code, method: method.rawValue, configuration: context.configuration)
            case .waitingForUser(let what):
                progress.message(what)
                if arguments.has("--json") { CommandJSON.event("sign", "waiting", ["message": .text(what)]) }
            case .deviceLink(let link, let elapsed):
                progress.finish()
                if elapsed == 0 { DesktopNotification.smartIDQRCode(where: "the terminal", configuration: context.configuration) }
                qrDisplay.show(link, elapsedSeconds: elapsed)
            }
        }
        progress.finish()
        let status: Int32 = outcome.unexpectedVerdict == .invalid ? 1 : 0
        if arguments.has("--json") {
            // errors and warnings: why a signature is INDETERMINATE or has warnings, as verify gives them.
            CommandJSON.result("sign", container: path, status: status,
                               error: status == 0 ? nil : (.notValid, "the new signature is \(outcome.report.verdict.rawValue)"), [
                "signature_file": .text(outcome.signatureFile), "signature_id": .text(outcome.signatureId),
                "signer": .text(outcome.report.signerName ?? ""), "verdict": .text(outcome.report.verdict.rawValue),
                "profile": .text(outcome.report.profile),
                "errors": try CommandJSON.Value(encoding: outcome.report.errors),
                "warnings": try CommandJSON.Value(encoding: outcome.report.warnings)])
        } else {
            Terminal.out(outcome.summary)
        }
        return status
    })

let extendCommand = Command(
    name: "extend",
    synopsis: "extend CONTAINER [--signature N]",
    summary: "add an archive time-stamp (LTA) to LT signatures",
    details: """
    Adds an XAdES archive time-stamp (EN 319 132-1, the profile libdigidocpp calls
    time-stamp-archive) from tsa-url to every LT signature (time-stamp and OCSP), or to
    signature N (numbered from 0, as verify shows them). It covers the data files, the signed
    parts and everything unsigned before it, so the signature stays verifiable once the first
    time-stamp's certificate has expired; extend again before the newest one expires. The
    container is rewritten atomically, and only when every extended signature still validates.
    """,
    options: [OptionSpec(names: ["--signature"], takesValue: true, help: "extend signature N (from 0) only"), jsonOption],
    run: { arguments, context in
        try requirePositionals(arguments, atLeast: 1, "CONTAINER")
        if arguments.positionals.count > 1 { throw UsageError("extend takes one CONTAINER") }
        var index: Int?
        if let value = arguments.value("--signature") {
            guard let number = Int(value), number >= 0 else { throw UsageError("--signature takes a signature number (0, 1, ...), not '\(value)'") }
            index = number
        }
        let lock = try lockForChange(arguments.positionals[0])
        defer { lock.release() }
        let container = try Container.open(arguments.positionals[0])
        let environment = try SignatureEnvironment(configuration: context.configuration)
        let cancellation = Cancellation()
        let interruption = CancelOnSignals(cancellation)
        defer { interruption.restore() }
        let (_, extended) = try ArchiveExtension(container: container, environment: environment).run(index: index, cancellation: cancellation)
        if arguments.has("--json") {
            CommandJSON.success("extend", container: arguments.positionals[0], ["extended": .list(extended.map { item in
                .object(["index": .number(item.index), "signature_id": .text(item.id ?? ""), "signature_file": .text(item.file),
                         "verdict": .text(item.report.verdict.rawValue), "profile": .text(item.report.profile)])
            })])
            return 0
        }
        for item in extended {
            Terminal.out("extended: \(item.report.signerName ?? "signature") \(item.id ?? "#\(item.index)") in \(item.file), "
                + "\(item.report.verdict.rawValue) (\(item.report.profile))")
        }
        return 0
    })

/// The signer for a command-line request; bad parameters are a usage error.
private func makeSigner(_ method: SigningMethod, _ parameters: SigningParameters, _ context: SignerContext) throws -> Signer {
    do { return try method.signer(parameters, context: context) } catch let error as SigningParameterError {
        throw UsageError(error.description)
    }
}

let verifyCommand = Command(
    name: "verify",
    synopsis: "verify CONTAINER [--json] [--warnings=error|warning|ignore] [--report=FILE]",
    summary: "validate every signature; exit 0 only if all are valid",
    details: """
    Checks each signature the way libdigidocpp does: data-file digests, the signature value,
    the signing certificate and its trust when it was issued and at the time-stamp, its
    qualification, the time-stamp, and the OCSP response. Verdicts: VALID,
    VALID_WITH_WARNINGS, INDETERMINATE (trust or revocation cannot be established) and
    INVALID, each with its reasons. Trust comes from the tsl, tsl-cert, tsl-signer-sha256 and
    trust-anchors settings. --json prints the report as JSON (see asicfs(1) for its fields).
    --report=FILE also writes it as an ETSI TS 119 102-2 validation report (XML) to keep.
    """,
    options: [jsonOption,
              OptionSpec(names: ["--warnings"], takesValue: true,
                         help: "'error': exit 1 also on VALID_WITH_WARNINGS (digidoc-tool's --warnings=error); 'warning' or 'ignore' (default): exit 0"),
              OptionSpec(names: ["--notify"], takesValue: false, help: "also show the result as a desktop notification (the file manager's Verify action)"),
              OptionSpec(names: ["--report"], takesValue: true, help: "also write the result to FILE as an ETSI TS 119 102-2 validation report (XML)")],
    run: { arguments, context in
        try requirePositionals(arguments, atLeast: 1, "CONTAINER")
        if arguments.positionals.count > 1 { throw UsageError("verify takes one CONTAINER") }
        let warningsFail: Bool
        switch arguments.value("--warnings") {
        // digidoc-tool's three spellings: 'warning' (its default) reports warnings without failing, as 'ignore' does.
        case nil, "ignore"?, "warning"?: warningsFail = false
        case "error"?: warningsFail = true
        case let other?: throw UsageError("--warnings takes error, warning or ignore, not '\(other)'")
        }
        let container = try Container.open(arguments.positionals[0])
        let environment = try SignatureEnvironment(configuration: context.configuration)
        let report = environment.validator().validate(container)
        var status: Int32 = report.verdict.isAcceptable ? 0 : 1
        if warningsFail && report.verdict == .validWithWarnings { status = 1 }
        if arguments.has("--json") {
            CommandJSON.result("verify", container: arguments.positionals[0], status: status,
                               error: status == 0 ? nil : (.notValid, "the container is \(report.verdict.rawValue)"),
                               try verifyJSONFields(report))
        } else {
            // report.text escapes its fields; this keeps any line from reaching the terminal raw.
            FileHandle.standardOutput.write(Data(PrintableText.escapedKeepingLines(report.text).utf8))
        }
        if let file = arguments.value("--report") {
            do { try Data(ETSIValidationReport(report).xml.utf8).write(to: URL(fileURLWithPath: file), options: .atomic) } catch {
                throw ReportWriteError(description: "cannot write the validation report to \(PrintableText.escaped(file)): \(error.localizedDescription)")
            }
        }
        if arguments.has("--notify") {
            let signers = report.signatures.compactMap(\.signerName)
            DesktopNotification.show("asicfs: \(PathText.lastComponent(of: arguments.positionals[0])): \(report.verdict.rawValue)",
                                     PrintableText.escaped(signers.isEmpty ? "no signatures" : "signed by " + signers.joined(separator: "; ")),
                                     urgent: !report.verdict.isAcceptable, configuration: context.configuration)
        }
        return status
    })

struct ReportWriteError: Error, CustomStringConvertible {
    let description: String
}

/// The validation report's fields (its findings as Validation gives them) beside the envelope:
/// its `path` is the envelope's `container`, its `data_files` the one shape (objects with `name`).
private func verifyJSONFields(_ report: ContainerReport) throws -> [String: CommandJSON.Value] {
    var fields = try CommandJSON.Value(json: report.json).fields
    fields["path"] = nil
    fields["format_version"] = nil
    fields["data_files"] = .list(report.dataFiles.map { .object(["name": .text($0)]) })
    return fields
}

/// Turns SIGINT and SIGTERM into a cancellation while a signing runs.
final class CancelOnSignals: @unchecked Sendable {
    private let sources: [DispatchSourceSignal]

    init(_ cancellation: Cancellation) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                cancellation.cancel()
                signal(number, SIG_DFL)  // the next one ends the process
            }
            source.resume()
            return source
        }
    }

    func restore() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}

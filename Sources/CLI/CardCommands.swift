import ASiC
import Configuration
import Crypto
import Foundation
import Signing
import SmartCard

let cardCommand = Command(
    name: "card",
    synopsis: "card status|certs|pins|change-pin|unblock [KEY=VALUE...]",
    summary: "the Estonian ID-card: readers, holder, certificates, PINs",
    details: """
    Subcommands:
      status [--json]                   every reader, whether it holds a card, and per ID-card its kind
                                        (IDEMIA or Thales), holder, personal code, document number, expiry
      certs [--json|--pem]              the authentication and signing certificates
      pins [--json]                     PIN1, PIN2 and PUK: tries left of 3, blocked or not
      change-pin pin1|pin2|puk [old-fd=N new-fd=N]
                                        change a PIN (or the PUK; a Thales card's PUK cannot be changed)
      unblock pin1|pin2 [puk-fd=N new-fd=N]
                                        set a new PIN with the PUK (also when the PIN is not blocked;
                                        its own tries are not used)
    Every subcommand takes reader=NAME (a part of the reader's name; needed when cards are in
    several readers) and can=DIGITS (the card access number printed on a card read without
    contact: PACE, then secure messaging). Without *-fd= descriptors, pinentry asks (setting
    pinentry; old, new, new again), else the terminal (echo off). PINs are never shown, logged
    or passed to other programs' command lines or environments.
    The card is reached through the PC/SC service pcscd; any PC/SC reader works (USB,
    PIN pad, contactless/NFC).
    """,
    options: [jsonOption,
              OptionSpec(names: ["--pem"], takesValue: false, help: "certs: print the two certificates as PEM")],
    run: { arguments, context in
        guard let subcommand = arguments.positionals.first else {
            throw UsageError("missing subcommand: status, certs, pins, change-pin or unblock")
        }
        let rest = Array(arguments.positionals.dropFirst())
        switch subcommand {
        case "status": return try cardStatus(CardArguments(rest, "status"), json: arguments.has("--json"))
        case "certs": return try cardCertificates(CardArguments(rest, "certs"), json: arguments.has("--json"), pem: arguments.has("--pem"))
        case "pins": return try cardPINs(CardArguments(rest, "pins"), json: arguments.has("--json"))
        case "change-pin": return try changePIN(rest, context: context)
        case "unblock": return try unblockPIN(rest, context: context)
        default:
            let known = ["status", "certs", "pins", "change-pin", "unblock"]
            let suggestion = Suggestion.closest(to: subcommand, among: known).map { "; did you mean '\($0)'?" } ?? ""
            throw UsageError("unknown card subcommand '\(subcommand)'\(suggestion) (one of \(known.joined(separator: ", ")))")
        }
    })

/// `reader=`, `can=` and the descriptors of a card subcommand.
struct CardArguments {
    let values: SigningParameters
    var service: IDCardService { IDCardService(reader: values["reader"], can: values["can"]) }

    init(_ arguments: [String], _ subcommand: String, descriptors: [String] = []) throws {
        do {
            values = try SigningParameters.parse(arguments: arguments, method: "card \(subcommand)",
                                                 allowed: Set(["reader", "can"] + descriptors))
        } catch let error as SigningParameterError {
            throw UsageError(error.description)
        }
        if let can = values["can"], !IDCardService.isCardAccessNumber(can) {
            throw UsageError("can= takes the card access number, the digits printed on the card")
        }
        do {
            for key in descriptors { _ = try values.descriptor(key, method: "card \(subcommand)", commandLine: true, asking: "it") }
        } catch let error as SigningParameterError {
            throw UsageError(error.description)
        }
    }

    /// A descriptor argument, or pinentry / the terminal.
    func source(_ key: String, configuration: Configuration) throws -> SecretSource {
        let descriptor = try values.descriptor(key, method: "card", commandLine: true, asking: "it")
        guard let source = SecretSource.choose(descriptor: descriptor, configuration: configuration,
                                               terminalAllowed: true) else {
            throw UsageError("no way to ask for the PIN (\(SecretSource.noPrompt)); give \(key)=N")
        }
        return source
    }
}

private func cardStatus(_ arguments: CardArguments, json: Bool) throws -> Int32 {
    let readers = try arguments.service.status()
    if json {
        CommandJSON.success("card status", container: nil, ["readers": .list(readers.map { report in
            .object(["name": .text(report.name), "card": cardJSON(report)])
        })])
        return 0
    }
    for report in readers {
        Terminal.out("\(report.name): \(describe(report.content))")
        if let holder = report.holder {
            Terminal.out("  holder           \(holder.surname), \(holder.givenNames)")
            Terminal.out("  personal code    \(holder.personalCode)")
            Terminal.out("  document         \(holder.documentNumber)")
            Terminal.out("  expiry           \(holder.expiry ?? "unknown")")
        }
        if let note = report.note { Terminal.out("  \(note)") }
    }
    return 0
}

private func describe(_ content: ReaderContent) -> String {
    switch content {
    case .empty: "no card"
    case .idCard(let kind, let contactless): "Estonian ID-card (\(kind.rawValue)\(contactless ? ", contactless" : ""))"
    case .contactlessCard: "a contactless card (give can=DIGITS to read it)"
    case .otherCard(let atr): "a card that is not an Estonian ID-card (ATR \(Hex.string(atr, separator: " ")))"
    }
}

private func cardJSON(_ report: IDCardService.ReaderReport) -> CommandJSON.Value {
    var fields: [String: CommandJSON.Value]
    switch report.content {
    case .empty: return .null
    case .idCard(let kind, let contactless): fields = ["kind": .text(kind.rawValue), "contactless": .flag(contactless)]
    case .contactlessCard: fields = ["kind": .text("unknown"), "contactless": .flag(true), "needs_can": .flag(true)]
    case .otherCard(let atr): fields = ["kind": .text("other"), "contactless": .flag(false), "atr": .text(Hex.string(atr))]
    }
    if let holder = report.holder {
        fields["surname"] = .text(holder.surname)
        fields["given_names"] = .text(holder.givenNames)
        fields["personal_code"] = .text(holder.personalCode)
        fields["document_number"] = .text(holder.documentNumber)
        fields["expiry"] = holder.expiry.map { .text($0) } ?? .null
    }
    if let note = report.note { fields["note"] = .text(note) }
    return .object(fields)
}

private func cardCertificates(_ arguments: CardArguments, json: Bool, pem: Bool) throws -> Int32 {
    if json && pem { throw UsageError("--json and --pem exclude each other") }
    let certificates = try arguments.service.certificates()
    if pem {
        FileHandle.standardOutput.write(Data(certificates.map(\.1.pem).joined().utf8))
        return 0
    }
    if json {
        CommandJSON.success("card certs", container: nil, ["certificates": .object(Dictionary(uniqueKeysWithValues: certificates.map { which, certificate in
            (which.rawValue, CommandJSON.Value.object([
                "subject": .text(certificate.subjectLine), "issuer": .text(certificate.issuerLine),
                "serial": .text(certificate.serialDecimal),
                "not_before": certificate.notBefore.map { .text(Format.isoDate($0)) } ?? .null,
                "not_after": certificate.notAfter.map { .text(Format.isoDate($0)) } ?? .null,
                "pem": .text(certificate.pem)]))
        }))])
        return 0
    }
    for (which, certificate) in certificates {
        Terminal.out("\(which.rawValue) certificate")
        Terminal.out("  subject          \(certificate.subjectLine)")
        Terminal.out("  issuer           \(certificate.issuerLine)")
        Terminal.out("  serial           \(certificate.serialDecimal)")
        Terminal.out("  valid            \(certificate.notBefore.map(Format.isoDate) ?? "?") to \(certificate.notAfter.map(Format.isoDate) ?? "?")")
    }
    return 0
}

private func cardPINs(_ arguments: CardArguments, json: Bool) throws -> Int32 {
    let counters = try arguments.service.retryCounters()
    if json {
        CommandJSON.success("card pins", container: nil, ["pins": .object(Dictionary(uniqueKeysWithValues: counters.map { secret, counter in
            var fields: [String: CommandJSON.Value] = ["tries_left": .number(counter.triesLeft), "max_tries": .number(counter.maxTries),
                                                       "blocked": .flag(counter.isBlocked)]
            if let changed = counter.changed { fields["changed"] = .flag(changed) }
            return (secret.rawValue, CommandJSON.Value.object(fields))
        }))])
        return 0
    }
    for (secret, counter) in counters {
        var line = "\(secret.name): \(counter.triesLeft) of \(counter.maxTries) tries left"
        if counter.isBlocked { line += " (blocked)" }
        if counter.changed == false { line += " (still the initial one: change it before use)" }
        Terminal.out(line)
    }
    return 0
}

private func secretArgument(_ rest: [String], allowed: [CardSecret], command: String) throws -> CardSecret {
    guard let name = rest.first, let secret = CardSecret(rawValue: name), allowed.contains(secret) else {
        throw UsageError("card \(command) takes \(allowed.map(\.rawValue).joined(separator: ", ")) first")
    }
    return secret
}

private func changePIN(_ rest: [String], context: CommandContext) throws -> Int32 {
    let secret = try secretArgument(rest, allowed: CardSecret.allCases, command: "change-pin")
    let arguments = try CardArguments(Array(rest.dropFirst()), "change-pin", descriptors: ["old-fd", "new-fd"])
    try arguments.service.change(secret, old: arguments.source("old-fd", configuration: context.configuration),
                                 new: arguments.source("new-fd", configuration: context.configuration))
    Terminal.out("\(secret.name) changed")
    return 0
}

private func unblockPIN(_ rest: [String], context: CommandContext) throws -> Int32 {
    let secret = try secretArgument(rest, allowed: [.pin1, .pin2], command: "unblock")
    let arguments = try CardArguments(Array(rest.dropFirst()), "unblock", descriptors: ["puk-fd", "new-fd"])
    try arguments.service.unblock(secret, puk: arguments.source("puk-fd", configuration: context.configuration),
                                  new: arguments.source("new-fd", configuration: context.configuration))
    Terminal.out("\(secret.name) unblocked: it has its full tries again")
    return 0
}

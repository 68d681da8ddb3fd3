import ASiC
import Crypto
import Foundation
import PKCS11

let tokensCommand = Command(
    name: "tokens",
    synopsis: "tokens [module=PATH] [--json]",
    summary: "list PKCS#11 tokens and their certificates",
    details: """
    Without module=, asks every PKCS#11 module registered with p11-kit
    (/usr/share/p11-kit/modules, /etc/pkcs11/modules; its trust module is left out); with
    module=PATH, that library only. For each token: its slot id, label, manufacturer, model,
    serial number and flags (login-required, pin-pad, pin-count-low, pin-final-try, pin-locked),
    and every certificate with its key on the token: subject, issuer, key type and size,
    validity, key usage, and whether it can sign (non-repudiation). No PIN is asked.
    'asicfs sign --method pkcs11' takes label=, slot= and key= (the certificate's key label or id)
    to choose among them. --json prints one JSON object (asicfs(1) JSON OUTPUT).
    """,
    options: [jsonOption],
    run: { arguments, _ in
        var module: String?
        for argument in arguments.positionals {
            guard argument.hasPrefix("module="), module == nil, argument.count > 7 else {
                throw UsageError("tokens takes only module=PATH, not '\(argument)'")
            }
            module = String(argument.dropFirst(7))
        }
        let modules = try module.map { [try PKCS11Module.load(path: $0)] } ?? PKCS11Module.registered()
        let listings = TokenInventory.scan(modules)
        if arguments.has("--json") {
            CommandJSON.success("tokens", container: nil, ["modules": try TokenReport.json(listings)])
        } else {
            Terminal.out(TokenReport.text(listings))
        }
        return 0
    })

/// How `tokens` shows what the modules hold. Every field from a token or certificate is escaped
/// (`PrintableText`) before it is laid out: a label cannot add a line.
enum TokenReport {
    struct JSONCertificate: Encodable {
        let keyId: String
        let keyLabel: String
        let subject: String
        let issuer: String
        let keyType: String
        let keyBits: Int
        let notBefore: String?
        let notAfter: String?
        let keyUsage: [String]
        let canSign: Bool
    }

    struct JSONToken: Encodable {
        let slot: UInt
        let label: String
        let manufacturer: String
        let model: String
        let serial: String
        let flags: [String]
        let loginRequired: Bool
        let pinPad: Bool
        let pinCountLow: Bool
        let pinFinalTry: Bool
        let pinLocked: Bool
        let certificates: [JSONCertificate]
        let error: String?
    }

    struct JSONModule: Encodable {
        let name: String
        let path: String
        let description: String?
        let manufacturer: String?
        let version: String?
        let tokens: [JSONToken]
        let error: String?
    }

    /// `modules` of `tokens --json`.
    static func json(_ listings: [ModuleListing]) throws -> CommandJSON.Value {
        try CommandJSON.Value(encoding: listings.map { listing in
            JSONModule(name: listing.module.name, path: listing.module.path, description: listing.info?.description,
                       manufacturer: listing.info?.manufacturer, version: listing.info?.version,
                       tokens: listing.tokens.map { token in
                           let flags = token.info.flags
                           return JSONToken(slot: token.slot, label: token.info.label, manufacturer: token.info.manufacturer,
                                            model: token.info.model, serial: token.info.serial, flags: flags.names,
                                            loginRequired: flags.contains(.loginRequired), pinPad: flags.contains(.protectedAuthenticationPath),
                                            pinCountLow: flags.contains(.userPINCountLow), pinFinalTry: flags.contains(.userPINFinalTry),
                                            pinLocked: flags.contains(.userPINLocked),
                                            certificates: token.certificates.map(certificate), error: token.problem)
                       }, error: listing.problem)
        })
    }

    static func certificate(_ item: TokenCertificate) -> JSONCertificate {
        let certificate = item.certificate
        let key = certificate.publicKey
        return JSONCertificate(keyId: item.idHex, keyLabel: item.label, subject: certificate.subjectLine, issuer: certificate.issuerLine,
                               keyType: keyType(item), keyBits: key?.bits ?? 0,
                               notBefore: certificate.notBefore.map(Format.isoDate), notAfter: certificate.notAfter.map(Format.isoDate),
                               keyUsage: certificate.keyUsageNames, canSign: certificate.hasNonRepudiation)
    }

    static func keyType(_ item: TokenCertificate) -> String {
        guard let key = item.certificate.publicKey else { return item.keyType ?? "unknown" }
        return key.isEC ? "EC" : key.isRSAPSS ? "RSA-PSS" : key.isRSA ? "RSA" : (item.keyType ?? "unknown")
    }

    static func text(_ listings: [ModuleListing]) -> String {
        let e = PrintableText.escaped
        var lines: [String] = []
        if listings.isEmpty { lines.append("no PKCS#11 modules are registered with p11-kit") }
        for listing in listings {
            let module = listing.module
            var head = module.name == module.path ? e(module.path) : "\(e(module.name)) (\(e(module.path)))"
            if let info = listing.info { head += ": \(e(info.manufacturer)) \(e(info.description)) \(info.version)" }
            lines.append(head)
            if let problem = listing.problem { lines.append("  cannot list its slots: \(e(problem))") }
            if listing.problem == nil && listing.tokens.isEmpty { lines.append("  no token") }
            for token in listing.tokens {
                let info = token.info
                lines.append("  slot \(token.slot): token \"\(e(info.label))\"")
                lines.append("    manufacturer  \(e(info.manufacturer))")
                lines.append("    model         \(e(info.model))")
                lines.append("    serial        \(e(info.serial))")
                lines.append("    flags         \(info.flags.names.joined(separator: ", "))")
                if let problem = token.problem { lines.append("    cannot read its certificates: \(e(problem))") }
                if token.problem == nil && token.certificates.isEmpty { lines.append("    no certificate with a key") }
                for item in token.certificates {
                    let certificate = item.certificate
                    lines.append("    certificate   key \(item.idHex)" + (item.label.isEmpty ? "" : " \"\(e(item.label))\""))
                    lines.append("      subject     \(e(certificate.subjectLine))")
                    lines.append("      issuer      \(e(certificate.issuerLine))")
                    lines.append("      key         \(keyType(item)) \(certificate.publicKey?.bits ?? 0) bits")
                    lines.append("      valid       \(certificate.notBefore.map(Format.isoDate) ?? "?") to \(certificate.notAfter.map(Format.isoDate) ?? "?")")
                    lines.append("      key usage   \(certificate.keyUsageNames.joined(separator: ", "))")
                    lines.append("      can sign    \(certificate.hasNonRepudiation ? "yes" : "no (no non-repudiation key usage)")")
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}

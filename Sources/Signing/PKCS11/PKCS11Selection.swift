import PKCS11

/// Which token and certificate a pkcs11 request means. `module=` loads one library; without it
/// every module p11-kit has registered is searched. `label=` (the token's label) and `slot=`
/// (the slot id `asicfs tokens` shows) narrow the tokens, `key=` (the certificate's label or its
/// CKA_ID in hex) the certificates. Of what is left, only certificates with non-repudiation
/// sign, and exactly one must remain: otherwise the error names every candidate.
struct PKCS11Selection {
    var module: String?
    var label: String?
    var slot: UInt?
    var key: String?

    init(_ parameters: SigningParameters) throws {
        module = parameters["module"]
        label = parameters["label"]
        key = parameters["key"]
        if let text = parameters["slot"] {
            guard let number = UInt(text) else {
                throw SigningParameterError("pkcs11: slot= takes a slot id (a number, as 'asicfs tokens' shows it), not '\(text)'")
            }
            slot = number
        }
        for (name, value) in [("module", module), ("label", label), ("key", key)] where value?.isEmpty == true {
            throw SigningParameterError("pkcs11: \(name)= needs a value")
        }
    }

    /// The modules to search.
    func modules() throws -> [PKCS11Module] {
        do {
            if let module { return [try PKCS11Module.load(path: module)] }
            let modules = try PKCS11Module.registered()
            guard !modules.isEmpty else {
                throw SigningError("no PKCS#11 module is registered with p11-kit (/usr/share/p11-kit/modules): give module=PATH")
            }
            return modules
        } catch let error as PKCS11Error {
            throw SigningError(error.description)
        }
    }

    struct Choice {
        let token: TokenListing
        let certificate: TokenCertificate
    }

    /// What the chosen key is for: signing wants non-repudiation; decrypting an encrypted
    /// container wants key agreement or key encipherment (or no keyUsage at all).
    enum Purpose {
        case signing, decryption

        func allows(_ certificate: TokenCertificate) -> Bool {
            switch self {
            case .signing: return certificate.certificate.hasNonRepudiation
            case .decryption:
                let usage = certificate.certificate.keyUsageNames
                return usage.isEmpty || usage.contains("keyAgreement") || usage.contains("keyEncipherment")
            }
        }
    }

    func choose(from listings: [ModuleListing], for purpose: Purpose = .signing) throws -> Choice {
        let all = listings.flatMap(\.tokens)
        let tokens = all.filter { token in
            (label == nil || token.info.label == label) && (slot == nil || token.slot == slot)
        }
        guard !tokens.isEmpty else { throw noToken(all, listings) }
        let keyed = tokens.flatMap { token in
            token.certificates.filter { matchesKey($0) }.map { Choice(token: token, certificate: $0) }
        }
        if keyed.isEmpty {
            let names = tokens.map { Self.name($0) }.joined(separator: ", ")
            if let key { throw SigningError("no certificate with the key label or id \"\(key)\" on \(names)") }
            let problems = tokens.compactMap { token in token.problem.map { "\(Self.name(token)): \($0)" } }
            throw SigningError("no certificate with a private key on \(names)"
                + (problems.isEmpty ? "" : " (" + problems.joined(separator: "; ") + ")"))
        }
        let usable = keyed.filter { purpose.allows($0.certificate) }
        guard !usable.isEmpty else {
            let names = Set(keyed.map { Self.name($0.token) }).sorted().joined(separator: ", ")
            throw SigningError(purpose == .signing
                ? "no certificate for signing on \(names): none has the non-repudiation key usage ("
                    + keyed.map { Self.subject($0.certificate) }.joined(separator: ", ") + ")"
                : "no certificate for decrypting on \(names): none has the key agreement or key encipherment key usage ("
                    + keyed.map { Self.subject($0.certificate) }.joined(separator: ", ") + ")")
        }
        guard usable.count == 1 else {
            throw SigningError("several certificates can \(purpose == .signing ? "sign" : "decrypt"): "
                + usable.map { "\(Self.name($0.token)) slot \($0.token.slot): \(Self.subject($0.certificate)) (key \($0.certificate.idHex))" }
                    .joined(separator: "; ")
                + "; choose one with label=, slot= or key=")
        }
        return usable[0]
    }

    private func matchesKey(_ certificate: TokenCertificate) -> Bool {
        guard let key else { return true }
        return certificate.label == key || certificate.idHex == key.lowercased()
    }

    private func noToken(_ all: [TokenListing], _ listings: [ModuleListing]) -> SigningError {
        let wanted = [label.map { "labelled \"\($0)\"" }, slot.map { "in slot \($0)" }].compactMap { $0 }.joined(separator: " ")
        let problems = listings.compactMap { listing in listing.problem.map { "\(listing.module.name): \($0)" } }
        let found = all.isEmpty ? "" : "; tokens found: " + all.map { "\(Self.name($0)) (slot \($0.slot))" }.joined(separator: ", ")
        let searched = module.map { "in \($0)" } ?? "in the modules p11-kit knows (" + listings.map(\.module.name).joined(separator: ", ") + ")"
        let what = wanted.isEmpty ? "no PKCS#11 token found \(searched): is it plugged in?" : "no token \(wanted) \(searched)"
        return SigningError(what + found + (problems.isEmpty ? "" : " (" + problems.joined(separator: "; ") + ")"))
    }

    static func name(_ token: TokenListing) -> String { "token \"\(token.info.label)\"" }

    static func subject(_ certificate: TokenCertificate) -> String {
        certificate.certificate.commonName ?? certificate.certificate.subjectLine
    }
}

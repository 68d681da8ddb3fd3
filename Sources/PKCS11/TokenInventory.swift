import Crypto

/// A certificate on a token whose key pair is there too (the same CKA_ID).
public struct TokenCertificate: @unchecked Sendable {
    public let certificate: Certificate
    public let id: [UInt8]
    public let label: String
    /// "EC" or "RSA", from the key object.
    public let keyType: String?

    /// The CKA_ID in lower-case hex, as `key=` takes it.
    public var idHex: String { id.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
}

/// One initialized token: where it is, what it says of itself, and its certificates with keys.
public struct TokenListing: Sendable {
    public let module: PKCS11Module
    public let slot: UInt
    public let info: TokenInfo
    public let certificates: [TokenCertificate]
    /// Certificates without a key there (the issuing CA, say): the chain a signature may need.
    public let otherCertificates: [Certificate]
    /// Why the certificates could not be read (the token went away while listing, say).
    public let problem: String?
}

/// One module: its own description and its tokens, or why it could not be asked.
public struct ModuleListing: Sendable {
    public let module: PKCS11Module
    public let info: ModuleInfo?
    public let tokens: [TokenListing]
    public let problem: String?
}

/// What tokens the modules hold, read without logging in: `asicfs tokens` shows it, and the
/// pkcs11 signer chooses from it.
public enum TokenInventory {
    public static func scan(_ modules: [PKCS11Module]) -> [ModuleListing] {
        modules.map { module in
            let info = try? module.info()
            let slots: [UInt]
            do { slots = try module.slots() } catch {
                return ModuleListing(module: module, info: info, tokens: [], problem: "\(error)")
            }
            var tokens: [TokenListing] = []
            for slot in slots {
                // A reader without a card, or a slot emptied between the calls: no token.
                guard let token = try? module.tokenInfo(slot: slot), token.flags.contains(.tokenInitialized) else { continue }
                do {
                    let session = try module.openSession(slot: slot)
                    let (withKeys, others) = try certificates(session)
                    tokens.append(TokenListing(module: module, slot: slot, info: token, certificates: withKeys,
                                               otherCertificates: others, problem: nil))
                } catch {
                    tokens.append(TokenListing(module: module, slot: slot, info: token, certificates: [], otherCertificates: [],
                                               problem: "\(error)"))
                }
            }
            return ModuleListing(module: module, info: info, tokens: tokens, problem: nil)
        }
    }

    /// Certificates that have a key with their CKA_ID: a private key, or its public half (tokens
    /// that require a login hide private keys until then, and SoftHSM does); then the others
    /// (CA certificates). Certificates that do not parse are left out.
    static func certificates(_ session: PKCS11Session) throws(PKCS11Error) -> ([TokenCertificate], [Certificate]) {
        var keys: [[UInt8]: String?] = [:]
        for objectClass in [ObjectClass.publicKey, .privateKey] {
            for key in try session.objects(objectClass) {
                guard let id = try session.attribute(.id, of: key), !id.isEmpty else { continue }
                keys[id] = try session.keyType(of: key)
            }
        }
        var found: [TokenCertificate] = []
        var others: [Certificate] = []
        for object in try session.objects(.certificate) {
            guard let der = try session.attribute(.value, of: object), let certificate = try? Certificate(der: der) else { continue }
            guard let id = try session.attribute(.id, of: object), let keyType = keys[id] else {
                others.append(certificate)
                continue
            }
            let label = (try session.attribute(.label, of: object)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            found.append(TokenCertificate(certificate: certificate, id: id, label: label, keyType: keyType))
        }
        return (found, others)
    }
}

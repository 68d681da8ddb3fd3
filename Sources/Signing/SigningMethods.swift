import Crypto

/// The signing methods of `.asicfs/sign/` and `asicfs sign --method`: their parameters, their
/// help text, and how a request becomes a `Signer`.
public enum SigningMethod: String, CaseIterable, Sendable {
    case mobileID = "mobile-id", smartID = "smart-id", idCard = "id-card", pkcs11, pkcs12, remote

    /// Parameters besides the common role and place ones.
    public var parameterKeys: Set<String> {
        switch self {
        case .mobileID: ["phone", "idcode", "language", "message"]
        case .smartID: ["country", "idcode", "document", "display"]
        case .idCard: ["reader", "pin-fd"]
        case .pkcs11: ["module", "slot", "label", "pin-fd"]
        case .pkcs12: PKCS12Signer.parameterKeys
        case .remote: ["service", "credential"]
        }
    }

    /// False for methods this version cannot sign with yet; asking for them is a clear error.
    public var isAvailable: Bool { self == .pkcs12 }

    /// What reading `.asicfs/sign/<method>` shows, and `asicfs sign --help` lists.
    public var usage: String {
        let common = "optional: role=... city=... state=... postal-code=... country=... (signer role and production place)"
        let text: String = switch self {
        case .mobileID: "phone=+372... idcode=...  [language=EST|ENG|RUS|LIT] [message=...]\nexample: echo \"phone=+37200000766 idcode=60001019906\" > .asicfs/sign/mobile-id"
        case .smartID: "country=EE idcode=...  or  document=PNOEE-...  [display=pin|confirmation]\nexample: echo \"country=EE idcode=30303039914\" > .asicfs/sign/smart-id"
        case .idCard: "[reader=NAME] [pin-fd=N]\nexample: echo \"\" > .asicfs/sign/id-card"
        case .pkcs11: "module=PATH [slot=N] [label=...] [pin-fd=N]\nexample: echo \"module=/usr/lib/softhsm/libsofthsm2.so slot=0\" > .asicfs/sign/pkcs11"
        case .pkcs12: "file=PATH passphrase-file=PATH\nexample: echo \"file=$HOME/me.p12 passphrase-file=$HOME/.me.pass\" > .asicfs/sign/pkcs12"
        case .remote: "service=NAME credential=ID\nexample: echo \"service=demo credential=mykey\" > .asicfs/sign/remote"
        }
        let availability = isAvailable ? "" : "\n(not available in this version of asicfs yet)"
        return "\(rawValue): \(text)\n\(common)\(availability)\n"
    }

    /// Checks the parameters (nothing is read or sent yet).
    public func parse(_ text: String) throws -> SigningParameters {
        try SigningParameters.parse(text, method: rawValue, allowed: parameterKeys)
    }

    /// Makes the signer. Reading files and secrets happens here, not in `parse`.
    public func signer(_ parameters: SigningParameters) throws -> Signer {
        switch self {
        case .pkcs12: return try PKCS12Signer(parameters: parameters)
        default: throw SigningError("\(rawValue): signing with \(rawValue) is not available in this version of asicfs yet")
        }
    }
}

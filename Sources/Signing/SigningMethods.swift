import Configuration
import Crypto
import HTTP
import XAdES

/// What a signer needs besides its parameters: the settings (service URLs, relying party, pinned
/// TLS certificates) and the signing's cancellation, which every blocking call must honour.
public struct SignerContext: Sendable {
    public let environment: SignatureEnvironment
    public let cancellation: Cancellation
    /// True on the command line: a terminal may be asked, descriptors (`pin-fd=`) are ours. False
    /// in a mount's daemon: pinentry (or a PIN pad) is how a secret is asked there.
    public let commandLine: Bool

    public init(environment: SignatureEnvironment, cancellation: Cancellation, commandLine: Bool = true) {
        self.environment = environment
        self.cancellation = cancellation
        self.commandLine = commandLine
    }

    public var configuration: Configuration { environment.configuration }
}

/// One signing method's way from parameters to a `Signer`.
public protocol SignerFactory {
    /// Parameters besides the common role and place ones.
    static var parameterKeys: Set<String> { get }
    /// The first line of the help: the parameters, and an example on a second line.
    static var usage: String { get }
    /// Checks the parameters' form before anything is read or sent (EINVAL in a mount, exit 2
    /// on the command line): throws `SigningParameterError` naming the field and why.
    static func validate(_ parameters: SigningParameters) throws
    /// Makes the signer: reads files and secrets, but contacts no service yet.
    static func make(_ parameters: SigningParameters, context: SignerContext) throws -> Signer
}

/// The signing methods of `.asicfs/sign/` and `asicfs sign --method`: their parameters, their
/// help text, and how a request becomes a `Signer`.
public enum SigningMethod: String, CaseIterable, Sendable {
    case mobileID = "mobile-id", smartID = "smart-id", idCard = "id-card", pkcs11, pkcs12, remote

    /// The implementation, or nil for methods this version cannot sign with yet.
    var factory: SignerFactory.Type? {
        switch self {
        case .pkcs12: PKCS12Signer.self
        case .mobileID: MobileIDSigner.self
        case .smartID: SmartIDSigner.self
        case .idCard: IDCardSigner.self
        case .remote: RemoteSigner.self
        case .pkcs11: nil
        }
    }

    /// Parameters besides the common role and place ones.
    public var parameterKeys: Set<String> {
        if let factory { return factory.parameterKeys }
        switch self {
        case .mobileID: return ["phone", "idcode", "language", "message"]
        case .smartID: return ["country", "idcode", "document", "display"]
        case .idCard: return ["reader", "pin-fd"]
        case .pkcs11: return ["module", "slot", "label", "pin-fd"]
        case .pkcs12, .remote: return ["service", "credential"]
        }
    }

    /// False for methods this version cannot sign with yet; asking for them is a clear error.
    public var isAvailable: Bool { factory != nil }

    /// What reading `.asicfs/sign/<method>` shows, and `asicfs sign --help` lists.
    public var usage: String {
        // Smart-ID's country= is the person's country, so the production place has none there.
        let common = self == .smartID ? "optional: role=... city=... state=... postal-code=... (signer role and production place)"
            : "optional: role=... city=... state=... postal-code=... country=... (signer role and production place)"
        let text: String
        if let factory {
            text = factory.usage
        } else {
            text = switch self {
            case .mobileID: "phone=+372... idcode=...  [language=EST|ENG|RUS|LIT] [message=...]\nexample: echo \"phone=+37200000766 idcode=60001019906\" > .asicfs/sign/mobile-id"
            case .smartID: "country=EE idcode=...  or  document=PNOEE-...  [display=pin|confirmation]\nexample: echo \"country=EE idcode=30303039914\" > .asicfs/sign/smart-id"
            case .idCard: "[reader=NAME] [pin-fd=N]\nexample: echo \"\" > .asicfs/sign/id-card"
            case .pkcs11: "module=PATH [slot=N] [label=...] [pin-fd=N]\nexample: echo \"module=/usr/lib/softhsm/libsofthsm2.so slot=0\" > .asicfs/sign/pkcs11"
            case .pkcs12, .remote: "service=NAME credential=ID\nexample: echo \"service=demo credential=mykey\" > .asicfs/sign/remote"
            }
        }
        let availability = isAvailable ? "" : "\n(not available in this version of asicfs yet)"
        return "\(rawValue): \(text)\n\(common)\(availability)\n"
    }

    /// Checks the parameters of a control-file line (nothing is read or sent yet): their names,
    /// then their form.
    public func parse(_ text: String) throws -> SigningParameters {
        let parameters = try SigningParameters.parse(text, method: rawValue, allowed: parameterKeys)
        try factory?.validate(parameters)
        return parameters
    }

    /// The same for command-line arguments, one `key=value` each, taken literally.
    public func parse(arguments: [String]) throws -> SigningParameters {
        let parameters = try SigningParameters.parse(arguments: arguments, method: rawValue, allowed: parameterKeys)
        try factory?.validate(parameters)
        return parameters
    }

    /// The signer role and production place of a request. Smart-ID's `country=` names the
    /// person's country (the interface's spelling), so it is not a production place there.
    public func signerDetails(_ parameters: SigningParameters) -> SignerDetails {
        var details = parameters.signerDetails
        if self == .smartID { details.country = nil }
        return details
    }

    /// Makes the signer. Reading files and secrets happens here, not in `parse`.
    public func signer(_ parameters: SigningParameters, context: SignerContext) throws -> Signer {
        guard let factory else {
            throw SigningError("\(rawValue): signing with \(rawValue) is not available in this version of asicfs yet")
        }
        return try factory.make(parameters, context: context)
    }
}

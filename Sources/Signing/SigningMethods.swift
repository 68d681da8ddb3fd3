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
    /// Checks the settings the method cannot start without (a service's address), before any
    /// request is taken; throws `SigningParameterError`.
    static func checkSettings(_ configuration: Configuration) throws
}

extension SignerFactory {
    public static func checkSettings(_ configuration: Configuration) throws {}
}

/// The signing methods of `.asicfs/sign/` and `asicfs sign --method`: their parameters, their
/// help text, and how a request becomes a `Signer`.
public enum SigningMethod: String, CaseIterable, Sendable {
    case mobileID = "mobile-id", smartID = "smart-id", idCard = "id-card", pkcs11, pkcs12, remote

    /// The implementation.
    var factory: SignerFactory.Type {
        switch self {
        case .pkcs12: PKCS12Signer.self
        case .mobileID: MobileIDSigner.self
        case .smartID: SmartIDSigner.self
        case .idCard: IDCardSigner.self
        case .pkcs11: PKCS11Signer.self
        case .remote: RemoteSigner.self
        }
    }

    /// Parameters besides the common role and place ones.
    public var parameterKeys: Set<String> { factory.parameterKeys }

    /// What `asicfs sign --help` lists: every parameter, `pin-fd=` included.
    public var commandLineUsage: String { "\(rawValue): \(factory.usage)\n\(commonUsage)\n" }

    /// What reading `.asicfs/sign/<method>` shows. A mount refuses `pin-fd=` (the daemon holds
    /// none of the writer's descriptors), so it is left out and a line says who asks instead.
    public var usage: String {
        guard parameterKeys.contains("pin-fd") else { return commandLineUsage }
        var lines = factory.usage.replacingOccurrences(of: " [pin-fd=N]", with: "")
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        let secret = self == .idCard ? "PIN2" : "the PIN"
        let asks = self == .remote ? "pinentry asks (setting pinentry)"
            : "pinentry asks (setting pinentry), else the reader's PIN pad"
        lines.insert("\(secret): \(asks); pin-fd=N works on the command line only", at: 1)
        return "\(rawValue): \(lines.joined(separator: "\n"))\n\(commonUsage)\n"
    }

    /// Smart-ID's country= is the person's country, so the production place has none there.
    private var commonUsage: String {
        self == .smartID ? "optional: role=... city=... state=... postal-code=... (signer role and production place)"
            : "optional: role=... city=... state=... postal-code=... country=... (signer role and production place)"
    }

    /// Checks the parameters of a control-file line (nothing is read or sent yet): their names,
    /// then their form.
    public func parse(_ text: String) throws -> SigningParameters {
        let parameters = try SigningParameters.parse(text, method: rawValue, allowed: parameterKeys)
        try factory.validate(parameters)
        return parameters
    }

    /// The beginning of a control-file request written in pieces: the parameters already ended
    /// by white space are checked by name and form (`parse` checks the whole request later).
    public func checkBeginning(_ text: String) throws -> SigningParameters {
        try SigningParameters.parse(arguments: SigningParameters.scan(text).ended, method: rawValue, allowed: parameterKeys)
    }

    /// Checks the settings this method needs (`remote.url` for remote).
    public func checkSettings(_ configuration: Configuration) throws {
        try factory.checkSettings(configuration)
    }

    /// The same for command-line arguments, one `key=value` each, taken literally.
    public func parse(arguments: [String]) throws -> SigningParameters {
        let parameters = try SigningParameters.parse(arguments: arguments, method: rawValue, allowed: parameterKeys)
        try factory.validate(parameters)
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
        try factory.make(parameters, context: context)
    }
}

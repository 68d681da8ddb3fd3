import Crypto
import Foundation
import SmartCard
import Synchronization

/// Signs with the Estonian ID-card's signing key over PC/SC: the certificate is read from the
/// card, PIN2 comes from `pin-fd`, pinentry, the reader's PIN pad or the terminal (in that
/// order), and the card signs the digest with one VERIFY and one PSO:COMPUTE DIGITAL SIGNATURE.
public final class IDCardSigner: Signer, SignerFactory {
    public let method = "id-card"
    public static let parameterKeys: Set<String> = ["reader", "can", "pin-fd"]
    public static let usage = "[reader=NAME] [can=DIGITS] [pin-fd=N]\nexample: echo \"\" > .asicfs/sign/id-card"

    public static func validate(_ parameters: SigningParameters) throws {
        if let can = parameters["can"], !IDCardService.isCardAccessNumber(can) {
            throw SigningParameterError("id-card: can= takes the card access number, the digits printed on the card")
        }
        _ = try parameters.descriptor("pin-fd", method: "id-card", commandLine: true, asking: "PIN2")
    }

    public static func make(_ parameters: SigningParameters, context: SignerContext) throws -> Signer {
        IDCardSigner(service: IDCardService(reader: parameters["reader"], can: parameters["can"]),
                     pinDescriptor: try parameters.descriptor("pin-fd", method: "id-card", commandLine: context.commandLine, asking: "PIN2"),
                     context: context)
    }

    let service: IDCardService
    let pinDescriptor: Int32?
    let context: SignerContext
    /// The reader the certificate came from: the signature is made by the card in it.
    private let chosen = Mutex<(reader: String, certificate: Certificate)?>(nil)

    init(service: IDCardService, pinDescriptor: Int32?, context: SignerContext) {
        self.service = service
        self.pinDescriptor = pinDescriptor
        self.context = context
    }

    public func certificate(events: (SigningEvent) -> Void) throws -> Certificate {
        if let known = chosen.withLock({ $0 }) { return known.certificate }
        events(.step("reading the ID-card's signing certificate"))
        let (reader, der) = try service.withCard { ($0.reader, try $0.application.certificate(.signing)) }
        let certificate: Certificate
        do { certificate = try Certificate(der: der) } catch {
            throw IDCardError.other("the card's signing certificate is not a valid certificate")
        }
        chosen.withLock { $0 = (reader, certificate) }
        return certificate
    }

    /// The card's keys are P-384: ECDSA with SHA-384.
    public func algorithm(for certificate: Certificate) -> SignatureAlgorithm {
        certificate.publicKey?.preferredAlgorithm ?? SignatureAlgorithm(.ecdsa, .sha384)
    }

    public func sign(digest: [UInt8], algorithm: SignatureAlgorithm, events: (SigningEvent) -> Void) throws -> [UInt8] {
        guard let (reader, certificate) = chosen.withLock({ $0 }) else {
            throw IDCardError.other("the signing certificate was not read first")
        }
        // The same reader as the certificate (exact name), whatever else is inserted now.
        let card = IDCardService(reader: reader, can: service.can)
        let counter = try card.withCard { try $0.application.retryCounter(.pin2) }
        if counter.isBlocked { throw IDCardError.blocked(.pin2) }
        if counter.changed == false { throw IDCardError.notActivated(.pin2) }

        let source = SecretSource.choose(descriptor: pinDescriptor, configuration: context.configuration,
                                         terminalAllowed: context.commandLine)
        var pin: SecretBytes? = nil
        defer { pin?.wipe() }
        if let source {
            let name = [certificate.givenName, certificate.surname].compactMap { $0 }.joined(separator: " ")
            let code = certificate.serialNumberAttribute.map { " (\($0))" } ?? ""
            events(.waitingForUser("enter PIN2 for the ID-card in \(reader) (\(source.whereToAnswer))"))
            let request = SecretRequest(title: "asicfs: ID-card",
                                        description: "Sign with the ID-card of \(name.isEmpty ? certificate.commonName ?? "the card's holder" : name)\(code)",
                                        prompt: "PIN2", error: IDCardService.triesNote(counter),
                                        lengths: CardSecret.pin2.lengths, digitsOnly: true)
            pin = try card.ask(source, request, .pin2)
        }
        if context.cancellation.isCancelled { throw SigningError("the signing was cancelled; the container is unchanged") }

        events(.step("signing on the ID-card"))
        return try card.withCard { connection in
            try connection.application.prepareSigning()
            if let pin {
                try connection.application.verify(.pin2, pin: pin, channel: connection.channel)
            } else if !connection.contactless, let pad = PINPad(card: connection.card) {
                events(.waitingForUser("enter PIN2 on the reader's PIN pad (\(reader))"))
                let answer = try pad.verify(connection.application.verifyCommand(.pin2, pin: nil),
                                            minimumLength: CardSecret.pin2.lengths.lowerBound)
                try CardStatus.checkVerification(answer, .pin2)
            } else {
                throw IDCardError.other(context.commandLine
                    ? "no way to ask for PIN2 (no PIN pad; \(SecretSource.noPrompt)); give pin-fd=N"
                    : "no way to ask for PIN2 in a mount: install pinentry (or set pinentry = PROGRAM), or use a reader with a PIN pad")
            }
            return try connection.application.sign(digest: digest)
        }
    }
}

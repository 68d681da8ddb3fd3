import CDOC
import Configuration
import Crypto
import SmartCard

/// The ID-card's authentication key (PIN1) as the recipient of an encrypted container: the
/// certificate is read from the card when the key is made (no PIN yet, so the container can pick
/// the recipient first); each key agreement asks PIN1 the way signing asks PIN2 (`pin-fd`,
/// pinentry, the terminal, else the reader's PIN pad) and has the card compute Z with MSE:SET and
/// PSO:DECIPHER (IDEMIA and Thales, contact or contactless with the CAN).
public final class IDCardRecipientKey: RecipientKey {
    public static let parameterKeys: Set<String> = ["reader", "can", "pin-fd"]
    public static let usage = "[reader=NAME] [can=DIGITS] [pin-fd=N]"

    /// Checks the parameters' form before the card is touched (as `IDCardSigner.validate`).
    public static func validate(_ parameters: SigningParameters) throws {
        if let can = parameters["can"], !IDCardService.isCardAccessNumber(can) {
            throw SigningParameterError("id-card: can= takes the card access number, the digits printed on the card")
        }
        _ = try parameters.descriptor("pin-fd", method: "id-card", commandLine: true, asking: "PIN1")
    }

    public let name: String
    public let certificate: Certificate?
    public let publicKey: PublicKey
    /// "GIVEN SURNAME (PNOEE-…)", for the PIN prompt.
    let holder: String
    /// The reader the certificate came from, by its exact name: the card in it decrypts.
    let service: IDCardService
    let pinDescriptor: Int32?
    let configuration: Configuration
    let commandLine: Bool
    let events: (SigningEvent) -> Void

    /// `parameters`: reader=, can=, pin-fd= (as `asicfs sign --method id-card`). `commandLine`
    /// false in a mount's daemon (pinentry or the PIN pad ask there; pin-fd= is refused).
    /// Reads the authentication certificate from the card.
    public init(parameters: SigningParameters, configuration: Configuration, commandLine: Bool = true,
                events: @escaping (SigningEvent) -> Void = { _ in }) throws {
        try Self.validate(parameters)
        pinDescriptor = try parameters.descriptor("pin-fd", method: "id-card", commandLine: commandLine, asking: "PIN1")
        self.configuration = configuration
        self.commandLine = commandLine
        self.events = events
        events(.step("reading the ID-card's authentication certificate"))
        let any = IDCardService(reader: parameters["reader"], can: parameters["can"])
        let (reader, der) = try Self.decryptionWording {
            try any.withCard { ($0.reader, try $0.application.certificate(.authentication)) }
        }
        let certificate: Certificate
        do { certificate = try Certificate(der: der) } catch {
            throw IDCardError.other("the card's authentication certificate is not a valid certificate")
        }
        guard let key = certificate.publicKey else {
            throw IDCardError.other("the card's authentication certificate has no public key asicfs can use")
        }
        service = IDCardService(reader: reader, can: any.can)
        self.certificate = certificate
        publicKey = key
        holder = Self.holder(certificate)
        name = "the ID-card of \(holder) in \(reader)"
    }

    public func agree(with senderKey: PublicKey) throws -> SecretBytes {
        guard let curve = publicKey.curve, senderKey.curve == curve else {
            throw IDCardError.other("the sender's key is not on the card's curve (\(publicKey.curve?.rawValue ?? "unknown"))")
        }
        let point = try senderKey.rawKeyBytes()
        return try Self.decryptionWording {
            let counter = try service.withCard { try $0.application.retryCounter(.pin1) }
            if counter.isBlocked { throw IDCardError.blocked(.pin1) }
            if counter.changed == false { throw IDCardError.notActivated(.pin1) }

            var pin: SecretBytes? = nil
            defer { pin?.wipe() }
            if let source = SecretSource.choose(descriptor: pinDescriptor, configuration: configuration, terminalAllowed: commandLine) {
                events(.waitingForUser("enter PIN1 for the ID-card in \(service.reader ?? "the reader") (\(source.whereToAnswer))"))
                let request = SecretRequest(title: "asicfs: ID-card",
                                            description: "Decrypt with the ID-card of \(holder)",
                                            prompt: "PIN1", error: IDCardService.triesNote(counter),
                                            lengths: CardSecret.pin1.lengths, digitsOnly: true)
                pin = try service.ask(source, request, .pin1)
            }
            events(.step("decrypting on the ID-card"))
            return try service.withCard { connection in
                try connection.application.prepareKeyAgreement()
                if let pin {
                    try connection.application.verify(.pin1, pin: pin, channel: connection.channel)
                } else if !connection.contactless, let pad = PINPad(card: connection.card) {
                    events(.waitingForUser("enter PIN1 on the reader's PIN pad (\(connection.reader))"))
                    let answer = try pad.verify(connection.application.verifyCommand(.pin1, pin: nil),
                                                minimumLength: CardSecret.pin1.lengths.lowerBound)
                    try CardStatus.checkVerification(answer, .pin1)
                } else {
                    throw IDCardError.other(commandLine
                        ? "no way to ask for PIN1 (no PIN pad; \(SecretSource.noPrompt)); give pin-fd=N"
                        : "no way to ask for PIN1 in a mount: install pinentry (or set pinentry = PROGRAM), or use a reader with a PIN pad")
                }
                return try connection.application.agree(point: point)
            }
        }
    }

    /// Estonian ID-cards since 2018 hold EC keys only; the RSA cards (EstEID 3.x) have expired.
    public func decrypt(_ wrappedKey: [UInt8], padding: RSAKeyPadding) throws -> SecretBytes {
        throw CDOCError(.unsupported, "the ID-card's authentication key is EC: it cannot decrypt a key wrapped with RSA "
            + "(RSA ID-cards are expired and not supported)")
    }

    static func holder(_ certificate: Certificate) -> String {
        let name = [certificate.givenName, certificate.surname].compactMap { $0 }.joined(separator: " ")
        let code = certificate.serialNumberAttribute.map { " (\($0))" } ?? ""
        return (name.isEmpty ? certificate.commonName ?? "the card's holder" : name) + code
    }

    /// The card errors whose words speak of signing, said for decryption.
    static func decryptionWording<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch IDCardError.removed {
            throw IDCardError.other("the card was removed; nothing was decrypted (insert it and try again)")
        }
    }
}
